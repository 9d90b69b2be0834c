import Foundation

/// The error of the response-handling layer: the response was rejected
/// (content type, status) or its body could not be decoded.
public struct ResponseError: LayeredError {
    /// Which check rejected the response.
    public typealias Code = ErrorCode<ResponseError>

    /// Which check failed.
    public let code: Code
    /// The URL of the response.
    public let url: URL?
    /// The HTTP status, when the response had one.
    public let statusCode: Int?
    /// The `Content-Type`, as the server sent it.
    public let contentType: String?
    /// The decoder's error, unchanged, for ``Code/decodingFailed``.
    public let underlying: (any Error)?

    /// Creates a response error.
    public init(
        _ code: Code,
        url: URL?,
        statusCode: Int? = nil,
        contentType: String? = nil,
        underlying: (any Error)? = nil
    ) {
        self.code = code
        self.url = url
        self.statusCode = statusCode
        self.contentType = contentType
        self.underlying = underlying
    }

    public var description: String {
        let source = url?.absoluteString ?? "<no URL>"
        switch code {
        case .unacceptableContentType:
            return "\(source): unacceptable content type \(contentType.map { "'\($0)'" } ?? "(none)")"
        case .notHTTPResponse:
            return "\(source): the response is not an HTTP response"
        case .unacceptableStatus:
            return "\(source): HTTP status \(statusCode.map(String.init) ?? "?")"
        case .partialContent:
            return "\(source): a 206 whose Content-Range is not the whole body"
        default:
            return "\(source): decoding failed: \(underlying.map { "\($0)" } ?? "unknown error")"
        }
    }
}

extension ErrorCode where Layer == ResponseError {
    /// The `Content-Type` is not one the request accepts.
    public static var unacceptableContentType: Self { Self("unacceptableContentType") }
    /// An `http(s)` URL produced a response that is not an HTTP response.
    public static var notHTTPResponse: Self { Self("notHTTPResponse") }
    /// The HTTP status is outside 200...299.
    public static var unacceptableStatus: Self { Self("unacceptableStatus") }
    /// A `206 Partial Content` to a request for the whole body, whose
    /// `Content-Range` is not `bytes 0-(N-1)/N`: part of an image.
    public static var partialContent: Self { Self("partialContent") }
    /// The body passed the checks but could not be decoded;
    /// ``ResponseError/underlying`` holds the decoder's error.
    public static var decodingFailed: Self { Self("decodingFailed") }
}
