/// The identity of a download: requests with equal data identities share
/// one job of the data stage. The cache policy is part of it, so a request
/// never joins work that reads caches it may not read, or that may skip
/// the network it must use.
struct DataIdentity: Hashable, Sendable, CustomStringConvertible {
    let source: SourceIdentity
    let cachePolicy: ImageRequest.CachePolicy

    var description: String { "\(source) [\(cachePolicy)]" }
}

/// The identity of a decode: the bytes, and the size they are decoded to.
struct DecodeIdentity: Hashable, Sendable, CustomStringConvertible {
    let data: DataIdentity
    let thumbnail: Thumbnail?

    var description: String { "\(data)" + (thumbnail.map { " thumbnail \($0)" } ?? "") }
}

/// The identity of the image after some of a request's processors: the
/// decode, and the identifiers of the processors run on it, in order.
struct ProcessIdentity: Hashable, Sendable, CustomStringConvertible {
    let decode: DecodeIdentity
    let processors: [String]

    var description: String { "\(decode) processors \(processors)" }
}

/// A stage identity whose output is an image: it names a memory-cache entry.
protocol ImageIdentity: Hashable, Sendable {
    /// The memory-cache key of the image this identity's job makes. The
    /// cache policy is left out: it decides which caches a request reads,
    /// not what the image is.
    var cacheKey: ImageCacheKey { get }
}

extension DecodeIdentity: ImageIdentity {
    var cacheKey: ImageCacheKey { ImageCacheKey(source: data.source, thumbnail: thumbnail, processors: []) }
}

extension ProcessIdentity: ImageIdentity {
    var cacheKey: ImageCacheKey { ImageCacheKey(source: decode.data.source, thumbnail: decode.thumbnail, processors: processors) }
}
