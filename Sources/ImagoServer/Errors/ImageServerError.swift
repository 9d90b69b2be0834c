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

        // The statuses are imgproxy's, so that a CDN in front of either
        // server caches and alerts on the same answers.

        /// 404 (imgproxy's "Invalid URL"): the path or an option is malformed or unknown.
        public static let badOptions = Code(name: "bad_options", status: 404)
        /// 403: the signature is missing or wrong, or the request lacks the
        /// server's secret (``ImageServerConfiguration/secret``).
        public static let badSignature = Code(name: "bad_signature", status: 403)
        /// 403: the server has a secret (``ImageServerConfiguration/secret``)
        /// and the request's `Authorization: Bearer` does not carry it.
        public static let badSecret = Code(name: "bad_secret", status: 403)
        /// 403: the path uses a security option (`max_result_dimension`,
        /// `max_src_resolution`...) without
        /// ``ImageServerConfiguration/allowsSecurityOptions``.
        public static let forbiddenOption = Code(name: "forbidden_option", status: 403)
        /// 404: the path uses an option outside
        /// ``ImageServerConfiguration/allowedOptions`` (imgproxy's
        /// `IMGPROXY_ALLOWED_PROCESSING_OPTIONS`).
        public static let optionNotAllowed = Code(name: "option_not_allowed", status: 404)
        /// 404 (imgproxy's "Invalid source URL"): the source's scheme, host or address is not allowed.
        public static let forbiddenSource = Code(name: "forbidden_source", status: 404)
        /// 404: the path's `expires` time has passed.
        public static let expired = Code(name: "expired", status: 404)
        /// 403: the source's store refused access (S3 or GCS: wrong
        /// credentials, no permission, a clock beyond its window).
        public static let sourceAccessDenied = Code(name: "source_access_denied", status: 403)
        /// 404: the source answered 404, or could not be reached at all (no
        /// such host, connection refused), as imgproxy answers both.
        public static let sourceNotFound = Code(name: "source_not_found", status: 404)
        /// 404 (imgproxy's "Source is unreachable"): no connection could be
        /// made to the source (no such host, refused), or its redirects looped
        /// or went on too long.
        public static let sourceUnreachable = Code(name: "source_unreachable", status: 404)
        /// 422 (imgproxy's "Source response is incomplete"): the source's
        /// connection closed before its body was whole.
        public static let sourceIncomplete = Code(name: "source_incomplete", status: 422)
        /// The source answered this 4xx status (other than 404), passed on as imgproxy does.
        public static func sourceRefused(_ status: Int) -> Code { Code(name: "source_refused", status: status) }
        /// 422 (imgproxy's "Invalid source image"): the source is too large, in bytes or in pixels.
        public static let sourceTooLarge = Code(name: "source_too_large", status: 422)
        /// 422: the source is not an image.
        public static let sourceNotAnImage = Code(name: "source_not_an_image", status: 422)
        /// 422: the source could not be decoded, or the result not encoded.
        public static let undecodable = Code(name: "undecodable", status: 422)
        /// 422 (imgproxy's "can't save"): the result cannot be written in the
        /// format asked for, such as a raster source asked for as SVG.
        public static let cannotWrite = Code(name: "cannot_write", status: 422)
        /// 502: the source answered a 5xx status or broke off.
        public static let sourceFailed = Code(name: "source_failed", status: 502)
        /// 429 (imgproxy's "Too many requests"): the server is saturated; retry later.
        public static let saturated = Code(name: "saturated", status: 429)
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
    /// Whether loading the source failed (not its decode or processing):
    /// the failures a ``FallbackImage`` answers.
    var failedLoading = false

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

    /// Errors are equal when their codes and messages are.
    public static func == (left: ImageServerError, right: ImageServerError) -> Bool {
        left.code == right.code && left.message == right.message
    }
}
#endif
