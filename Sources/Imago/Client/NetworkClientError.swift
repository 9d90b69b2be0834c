import Foundation

/// The error of ``NetworkClient``: which layer failed, and that layer's
/// error unchanged.
///
/// ```swift
/// do { _ = try await client.image(for: request) }
/// catch let error as NetworkClientError where error.code == .handlerFailed {
///     let response = error.underlying as? ResponseError
///     print(response?.statusCode ?? "no status")
/// }
/// ```
public struct NetworkClientError: Error, Sendable, CustomStringConvertible {
    /// Which layer failed.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The loader failed (``underlying`` is what the ``DataLoading`` reported,
        /// usually a ``DataLoadingError``).
        public static let sessionFailed = Code("sessionFailed")
        /// The response was rejected or could not be decoded (``underlying``
        /// is a ``ResponseError``).
        public static let handlerFailed = Code("handlerFailed")

        public var description: String { name }
    }

    /// Which layer failed.
    public let code: Code
    /// The requested URL.
    public let url: URL?
    /// The failing layer's error, unchanged.
    public let underlying: any Error

    /// Creates a client error.
    public init(_ code: Code, url: URL?, underlying: any Error) {
        self.code = code
        self.url = url
        self.underlying = underlying
    }

    /// The ``ResponseError`` of a ``Code/handlerFailed`` error.
    public var responseError: ResponseError? { underlying as? ResponseError }

    /// The HTTP status, when the handler rejected the response for it or saw one.
    public var statusCode: Int? { responseError?.statusCode }

    public var description: String {
        "\(code): \(underlying)"
    }
}
