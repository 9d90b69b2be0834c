/// A request with the identities of its work at each stage, worked out
/// once by the pipeline (they depend on its credential headers).
struct IdentifiedRequest: Sendable {
    let request: ImageRequest
    /// The identity of its download.
    let data: DataIdentity
    /// The memory-cache key of its final image, worked out once: every
    /// request asks for it at least twice (the lookup, then the store).
    let cacheKey: ImageCacheKey

    /// `nil` when the request has neither a URL nor an image ID.
    init?(_ request: ImageRequest, credentialHeaders: Set<String>) {
        guard let source = SourceIdentity(request, credentialHeaders: credentialHeaders) else { return nil }
        self.request = request
        data = DataIdentity(source: source, cachePolicy: request.cachePolicy)
        cacheKey = ImageCacheKey(source: source, thumbnail: request.thumbnail, processors: request.processors.map(\.identifier))
    }

    /// The identity of its decoded image.
    var decode: DecodeIdentity { DecodeIdentity(data: data, thumbnail: request.thumbnail) }

    /// The identity of its image after the first `count` processors.
    func process(count: Int) -> ProcessIdentity {
        ProcessIdentity(decode: decode, processors: request.processors.prefix(count).map(\.identifier))
    }

    /// The disk-cache key of its bytes.
    var diskKey: String { data.source.diskKey }

    /// Whether the disk cache applies: local files are read directly, never cached.
    var usesDataCache: Bool { !(request.url?.isFileURL ?? false) }
}
