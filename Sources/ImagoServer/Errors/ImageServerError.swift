#if Server
import Foundation

/// Why the image server refused or failed a request: an HTTP status, a
/// stable code and a message, sent as `{"error": {"code": ..., "message": ...}}`.
///
/// The codes and their statuses are part of the server's contract (listed
/// in the README's "The image server"); clients and dashboards match on them.
public struct ImageServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, with the status it is answered with.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name in the JSON body, for example `bad_options`.
        public let name: String
        /// The HTTP status it is answered with.
        public let status: Int

        public var description: String { name }

        /// 400: the path or an option is malformed or unknown.
        public static let badOptions = Code(name: "bad_options", status: 400)
        /// 403: the signature is missing or wrong.
        public static let badSignature = Code(name: "bad_signature", status: 403)
        /// 403: the path uses an option the server does not allow, such as a
        /// security option (`max_result_dimension`) without
        /// ``ImageServerConfiguration/allowsSecurityOptions``.
        public static let forbiddenOption = Code(name: "forbidden_option", status: 403)
        /// 403: the source's scheme, host or address is not allowed.
        public static let forbiddenSource = Code(name: "forbidden_source", status: 403)
        /// 404: the path's `expires` time has passed.
        public static let expired = Code(name: "expired", status: 404)
        /// 403: the source's store refused access (S3: wrong credentials, no
        /// permission, a clock beyond its window).
        public static let sourceAccessDenied = Code(name: "source_access_denied", status: 403)
        /// 404: the source answered 404 or 410.
        public static let sourceNotFound = Code(name: "source_not_found", status: 404)
        /// 413: the source is too large, in bytes or in pixels.
        public static let sourceTooLarge = Code(name: "source_too_large", status: 413)
        /// 415: the source is not an image.
        public static let sourceNotAnImage = Code(name: "source_not_an_image", status: 415)
        /// 422: the source could not be decoded.
        public static let undecodable = Code(name: "undecodable", status: 422)
        /// 502: the source failed or could not be reached.
        public static let sourceFailed = Code(name: "source_failed", status: 502)
        /// 503: the server is saturated; retry later.
        public static let saturated = Code(name: "saturated", status: 503)
        /// 503: the request passed the server's ``ImageServerConfiguration/timeout``
        /// (its queue wait, download and render together), as imgproxy answers
        /// a timeout; the render was stopped.
        public static let timedOut = Code(name: "timeout", status: 503)
        /// 504: the source timed out.
        public static let sourceTimedOut = Code(name: "source_timed_out", status: 504)
    }

    /// What went wrong.
    public let code: Code
    /// A sentence for a person reading the response or the log.
    public let message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The answer to a request that passed the server's timeout.
    static var timedOut: ImageServerError {
        ImageServerError(.timedOut, "the request took longer than the server's timeout")
    }

    /// The HTTP status.
    public var status: Int { code.status }

    /// The response body: `{"error":{"code":"...","message":"..."}}`.
    public var jsonBody: Data {
        struct Body: Encodable {
            struct Detail: Encodable { let code: String; let message: String }
            let error: Detail
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Two strings always encode: there is no failure to handle.
        return try! encoder.encode(Body(error: .init(code: code.name, message: message)))
    }

    public var description: String { "\(code.status) \(code.name): \(message)" }
}
#endif
