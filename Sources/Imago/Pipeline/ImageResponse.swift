import Foundation

/// A loaded image and where it came from.
public struct ImageResponse: Sendable {
    /// Where the bytes (or the image) were found.
    public enum Source: String, Sendable, Hashable {
        /// The memory cache: no loading, no decoding.
        case memory
        /// The disk cache (fresh, or revalidated with a 304).
        case disk
        /// The network.
        case network
        /// A local file (never cached on disk).
        case file
    }

    /// The decoded, processed image.
    public let image: Image
    /// The request it answers.
    public let request: ImageRequest
    /// Where it came from.
    public let source: Source
    /// The encoded format, when the bytes were decoded for this response
    /// (`nil` for a memory-cache hit).
    public let format: ImageFormat?
    /// The size of the encoded bytes (`nil` for a memory-cache hit).
    public let byteCount: Int?
    /// Where the time went: loading, decoding, processing, waiting.
    public let metrics: ImageTaskMetrics

    /// Creates a response.
    public init(image: Image, request: ImageRequest, source: Source, format: ImageFormat? = nil, byteCount: Int? = nil,
                metrics: ImageTaskMetrics = ImageTaskMetrics()) {
        self.metrics = metrics
        self.image = image
        self.request = request
        self.source = source
        self.format = format
        self.byteCount = byteCount
    }
}
