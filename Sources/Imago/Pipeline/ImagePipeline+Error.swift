import Foundation

/// The error of ``ImagePipeline``: which stage failed, for which request,
/// with that stage's error unchanged.
public struct ImagePipelineError: LayeredError {
    /// Which stage failed.
    public typealias Code = ErrorCode<ImagePipelineError>

    /// Which stage failed.
    public let code: Code
    /// The request's URL.
    public let url: URL?
    /// The stage's error, unchanged.
    public let underlying: (any Error)?

    /// Creates a pipeline error.
    public init(_ code: Code, url: URL?, underlying: (any Error)? = nil) {
        self.code = code
        self.url = url
        self.underlying = underlying
    }

    public var description: String {
        "\(url?.absoluteString ?? "<no URL>"): \(code)" + (underlying.map { ": \($0)" } ?? "")
    }
}

extension ErrorCode where Layer == ImagePipelineError {
    /// The loader failed (``ImagePipelineError/underlying`` is what it reported).
    public static var dataLoadingFailed: Self { Self("dataLoadingFailed") }
    /// The response was rejected: content type or status (a ``ResponseError``).
    public static var responseRejected: Self { Self("responseRejected") }
    /// The bytes could not be decoded (an ``ImageDecodingError``).
    public static var decodingFailed: Self { Self("decodingFailed") }
    /// A processor threw (its error).
    public static var processingFailed: Self { Self("processingFailed") }
    /// The request has neither a URL nor an ``ImageRequest/imageID``: there
    /// is nothing to load it from or to cache it under.
    public static var invalidRequest: Self { Self("invalidRequest") }
    /// ``ImageRequest/CachePolicy/onlyCached`` and nothing is cached.
    public static var notCached: Self { Self("notCached") }
}
