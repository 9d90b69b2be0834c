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
public struct NetworkClientError: LayeredError {
    /// Which layer failed.
    public typealias Code = ErrorCode<NetworkClientError>

    /// Which layer failed.
    public let code: Code
    /// The requested URL.
    public let url: URL?
    /// The failing layer's error, unchanged.
    public let underlying: (any Error)?

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
        "\(code): " + (underlying.map { "\($0)" } ?? "no cause")
    }
}

extension ErrorCode where Layer == NetworkClientError {
    /// The loader failed (``underlying`` is what the ``DataLoading`` reported,
    /// usually a ``DataLoadingError``).
    public static var sessionFailed: Self { Self("sessionFailed") }
    /// The response was rejected or could not be decoded (``underlying``
    /// is a ``ResponseError``).
    public static var handlerFailed: Self { Self("handlerFailed") }
}
