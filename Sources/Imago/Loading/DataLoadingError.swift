import Foundation

/// The error a loader reports: a ``Code``, the URL, and the cause from the
/// layer below (a `URLError`, a file-system error) passed through unchanged.
public struct DataLoadingError: Error, Sendable, CustomStringConvertible {
    /// What went wrong while loading.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The transport failed in a way no other code names (TLS, a
        /// malformed response). ``DataLoadingError/underlying`` holds the
        /// system's error.
        public static let transport = Code("transport")
        /// No connection could be made: refused, unreachable, no such host.
        public static let cannotConnect = Code("cannotConnect")
        /// The connection was reset or closed before the body was complete,
        /// including a body shorter than its `Content-Length`.
        public static let connectionLost = Code("connectionLost")
        /// A timeout passed: connecting, waiting for data, or the whole load.
        public static let timedOut = Code("timedOut")
        /// The server redirected more times than the loader allows.
        public static let tooManyRedirects = Code("tooManyRedirects")
        /// A redirect led back to a URL already visited in the same load.
        public static let redirectLoop = Code("redirectLoop")
        /// The body is larger than the loader's limit (declared or received).
        public static let responseTooLarge = Code("responseTooLarge")
        /// The file could not be read: missing, a directory, no permission.
        public static let fileUnreadable = Code("fileUnreadable")
        /// The URL's scheme is not one this loader handles.
        public static let unsupportedScheme = Code("unsupportedScheme")
        /// The task was cancelled before it finished.
        public static let cancelled = Code("cancelled")

        public var description: String { name }
    }

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
