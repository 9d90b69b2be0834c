import Foundation

/// The error of ``ImagePipeline``: which stage failed, for which request,
/// with that stage's error unchanged.
public struct ImagePipelineError: Error, Sendable, CustomStringConvertible {
    /// Which stage failed.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The loader failed (``ImagePipelineError/underlying`` is what it reported).
        public static let dataLoadingFailed = Code("dataLoadingFailed")
        /// The response was rejected: content type or status (a ``ResponseError``).
        public static let responseRejected = Code("responseRejected")
        /// The bytes could not be decoded (an ``ImageDecodingError``).
        public static let decodingFailed = Code("decodingFailed")
        /// A processor threw (its error).
        public static let processingFailed = Code("processingFailed")
        /// ``ImageRequest/CachePolicy/onlyCached`` and nothing is cached.
        public static let notCached = Code("notCached")

        public var description: String { name }
    }

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
