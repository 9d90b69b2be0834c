import Foundation

/// The error a loader reports: a ``Code``, the URL, and the cause from the
/// layer below (a `URLError`, a file-system error) passed through unchanged.
public struct DataLoadingError: LayeredError {
    /// What went wrong while loading.
    public typealias Code = ErrorCode<DataLoadingError>

    /// What went wrong.
    public let code: Code
    /// The URL being loaded.
    public let url: URL?
    /// A short explanation for people.
    public let message: String
    /// The error from the layer below, unchanged.
    public let underlying: (any Error)?

    /// Creates a loading error.
    public init(_ code: Code, url: URL?, message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.url = url
        self.message = message
        self.underlying = underlying
    }

    public var description: String {
        "loading \(url?.absoluteString ?? "<no URL>") failed (\(code)): \(message)"
    }
}

extension ErrorCode where Layer == DataLoadingError {
    /// The transport failed in a way no other code names (TLS, a
    /// malformed response). ``DataLoadingError/underlying`` holds the
    /// system's error.
    public static var transport: Self { Self("transport") }
    /// No connection could be made: refused, unreachable, no such host.
    public static var cannotConnect: Self { Self("cannotConnect") }
    /// The connection was reset or closed before the body was complete,
    /// including a body shorter than its `Content-Length`.
    public static var connectionLost: Self { Self("connectionLost") }
    /// A timeout passed: connecting, waiting for data, or the whole load.
    public static var timedOut: Self { Self("timedOut") }
    /// The server redirected more times than the loader allows.
    public static var tooManyRedirects: Self { Self("tooManyRedirects") }
    /// A redirect led back to a URL already visited in the same load.
    public static var redirectLoop: Self { Self("redirectLoop") }
    /// The body is larger than the loader's limit (declared or received).
    public static var responseTooLarge: Self { Self("responseTooLarge") }
    /// The file could not be read: missing, a directory, no permission.
    public static var fileUnreadable: Self { Self("fileUnreadable") }
    /// The URL's scheme is not one this loader handles.
    public static var unsupportedScheme: Self { Self("unsupportedScheme") }
    /// The task was cancelled before it finished.
    public static var cancelled: Self { Self("cancelled") }
}
