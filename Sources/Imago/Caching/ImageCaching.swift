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

/// What a cached image is stored under: the source and everything that
/// changes the resulting pixels (thumbnail size, processors, frame).
public struct ImageCacheKey: Hashable, Sendable, CustomStringConvertible {
    /// The key's text, such as `https://a.example/cat.png#max=256`.
    public let rawValue: String

    /// Creates a key from its text.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }
}
