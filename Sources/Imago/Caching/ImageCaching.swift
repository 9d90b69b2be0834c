/// A memory cache of decoded images: the seam for the pipeline's first and
/// last stage. Implementations are thread-safe.
public protocol ImageCaching: Sendable {
    /// The image stored for `key`, or `nil`; a hit counts as a use.
    func image(for key: ImageCacheKey) -> Image?
    /// Stores `image` for `key`, replacing what was there. The cache may
    /// decline (for instance an image too large to be worth keeping).
    func store(_ image: Image, for key: ImageCacheKey)
    /// Removes the image stored for `key`.
    func removeImage(for key: ImageCacheKey)
    /// Removes every image.
    func removeAll()
}

/// What a cached image is stored under: for the pipeline's images, the
/// source (the URL with the credentials it was loaded with, or the request's
/// ``ImageRequest/imageID``) and everything that changes the pixels
/// (thumbnail size, processors), kept as separate typed fields so that no
/// two different requests can share a key.
///
/// ```swift
/// let key = pipeline.cacheKey(for: ImageRequest(url: url))   // what the pipeline uses
/// cache.store(image, for: ImageCacheKey("my-own-image"))     // a key of your own
/// ```
public struct ImageCacheKey: Hashable, Sendable, CustomStringConvertible {
    private enum Storage: Hashable, Sendable {
        case named(String)
        case pipeline(source: SourceIdentity, thumbnail: Thumbnail?, processors: [String])
    }

    private let storage: Storage

    /// A key of your own, for images you store yourself. It never equals a
    /// key the pipeline makes, whatever the text.
    public init(_ name: String) {
        storage = .named(name)
    }

    /// The key of a pipeline image.
    init(source: SourceIdentity, thumbnail: Thumbnail?, processors: [String]) {
        storage = .pipeline(source: source, thumbnail: thumbnail, processors: processors)
    }

    /// The key in words, for logs (credentials appear as a fingerprint only).
    public var description: String {
        switch storage {
        case .named(let name): name
        case .pipeline(let source, let thumbnail, let processors):
            "\(source)" + (thumbnail.map { " thumbnail \($0)" } ?? "") + (processors.isEmpty ? "" : " processors \(processors)")
        }
    }
}
