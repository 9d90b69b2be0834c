import Foundation

/// What the ``LoopbackServer`` sends for a request: status, headers, body,
/// and how the body goes out on the wire.
public struct ServedResponse: Sendable {
    /// How the body is written, including on purpose badly.
    public enum Delivery: Sendable {
        /// All at once.
        case whole
        /// `chunkSize` bytes every `interval`: a slow server. It stops when
        /// the client goes away or the server stops.
        case trickle(chunkSize: Int, interval: Duration)
        /// A body shorter than its `Content-Length`: the full length is
        /// declared, the first `afterBytes` bytes are sent, then the
        /// connection is closed normally (FIN).
        case truncated(afterBytes: Int)
        /// `Transfer-Encoding: chunked` with no `Content-Length`, in chunks
        /// of `chunkSize` bytes.
        case chunked(chunkSize: Int)
        /// The connection is reset (a TCP RST) before any byte of the response.
        case resetBeforeHead
        /// The head and the first `afterBytes` bytes of the body are sent,
        /// then the connection is reset (a TCP RST).
        case reset(afterBytes: Int)
        /// `Transfer-Encoding: chunked` that never ends: a chunk of `chunkSize`
        /// bytes every `interval` (the body over and over, or zeros when it
        /// is empty) until the client goes away or the server stops. Nothing
        /// is queued while the client is not reading.
        case endlessChunks(chunkSize: Int, interval: Duration)
    }

    /// The HTTP status code.
    public var status: Int
    /// The response headers, in order. `Content-Length` is added when absent
    /// (except for chunked deliveries and statuses 204 and 304); one given
    /// here is sent as is, so it can differ from the body's size.
    public var headers: [(name: String, value: String)]
    /// The body.
    public var body: Data
    /// How the body is written.
    public var delivery: Delivery

    /// Creates a response.
    public init(status: Int = 200, headers: [(name: String, value: String)] = [], body: Data = Data(), delivery: Delivery = .whole) {
        self.status = status
        self.headers = headers
        self.body = body
        self.delivery = delivery
    }

    /// A response with a body and its content type.
    public static func ok(_ body: Data, contentType: String?, status: Int = 200) -> ServedResponse {
        ServedResponse(status: status, headers: contentType.map { [("Content-Type", $0)] } ?? [], body: body)
    }

    /// A text response with a status, such as a 404 page.
    public static func text(_ text: String, status: Int, contentType: String = "text/plain; charset=utf-8") -> ServedResponse {
        ok(Data(text.utf8), contentType: contentType, status: status)
    }

    /// A redirect to `location` (a path on this server or a full URL).
    public static func redirect(to location: String, status: Int = 301) -> ServedResponse {
        ServedResponse(status: status, headers: [("Location", location)])
    }

    /// The same response with its body written as `delivery` says.
    public func delivered(_ delivery: Delivery) -> ServedResponse {
        var copy = self
        copy.delivery = delivery
        return copy
    }

    /// The value of the first header called `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// A request the ``LoopbackServer`` received.
public struct RecordedRequest: Sendable {
    /// The method, such as `GET`.
    public let method: String
    /// The path without the query.
    public let path: String
    /// The query string, without `?`, when there was one.
    public let query: String?
    /// The request headers, in order.
    public let headers: [(name: String, value: String)]
    /// The request body.
    public let body: Data

    /// The value of the first header called `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}
