import Foundation
import Imago
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a ``MockDataLoader`` delivers for one URL: response metadata, the
/// body in chunks, and an optional failure.
///
/// ```swift
/// loader.stub(url, .image(pngBytes))                       // 200, image/png
/// loader.stub(other, .status(404))                         // 404, empty body
/// loader.stub(slow, .data(bytes, chunkSize: 10).held())    // the test releases it
/// loader.stub(down, .failure(URLError(.notConnectedToInternet)))
/// ```
public struct MockResponse: Sendable {
    /// The HTTP status; `nil` delivers a plain, non-HTTP `URLResponse`.
    public var statusCode: Int?
    /// The response headers.
    public var headers: [String: String]
    /// The body, delivered chunk by chunk.
    public var chunks: [Data]
    /// Whether the response metadata is delivered at all. A connection
    /// refused, for instance, has none: with no chunks, `load` throws the
    /// ``error``; otherwise the response is `nil`.
    public var deliversResponse: Bool
    /// The failure delivered after the chunks, instead of finishing.
    public var error: (any Error)?
    /// Whether the load waits for the test (``MockDataTask/advance()``,
    /// ``MockDataTask/complete()``) instead of delivering everything at once.
    public var isHeld: Bool

    /// Creates a response.
    public init(
        statusCode: Int? = 200,
        headers: [String: String] = [:],
        chunks: [Data] = [],
        deliversResponse: Bool = true,
        error: (any Error)? = nil,
        isHeld: Bool = false
    ) {
        self.statusCode = statusCode
        self.headers = headers
        self.chunks = chunks
        self.deliversResponse = deliversResponse
        self.error = error
        self.isHeld = isHeld
    }

    /// A response with `data` as the body.
    ///
    /// - Parameter chunkSize: When set, the body arrives in chunks of that size.
    public static func data(
        _ data: Data,
        statusCode: Int? = 200,
        contentType: String? = "application/octet-stream",
        headers: [String: String] = [:],
        chunkSize: Int? = nil
    ) -> MockResponse {
        var headers = headers
        if let contentType { headers["Content-Type"] = contentType }
        headers["Content-Length"] = headers["Content-Length"] ?? String(data.count)
        return MockResponse(statusCode: statusCode, headers: headers, chunks: Self.split(data, chunkSize: chunkSize))
    }

    /// A 200 response with image bytes and the content type of their format
    /// (`application/octet-stream` when the bytes are not a known format).
    public static func image(_ data: Data, chunkSize: Int? = nil) -> MockResponse {
        .data(data, contentType: ImageFormat(sniffing: data)?.mimeType ?? "application/octet-stream", chunkSize: chunkSize)
    }

    /// A 200 response with a JSON body.
    public static func json(_ data: Data, statusCode: Int = 200) -> MockResponse {
        .data(data, statusCode: statusCode, contentType: "application/json")
    }

    /// A 200 response with `value` encoded as JSON.
    public static func json(encoding value: some Encodable, statusCode: Int = 200) throws -> MockResponse {
        .json(try JSONEncoder().encode(value), statusCode: statusCode)
    }

    /// A response with `statusCode`, an optional body and content type.
    public static func status(_ statusCode: Int, body: Data = Data(), contentType: String? = nil) -> MockResponse {
        .data(body, statusCode: statusCode, contentType: contentType)
    }

    /// A redirect to `location` (absolute, or relative to the requested URL)
    /// with an empty body: for a loader or a server that follows redirects
    /// itself, such as the image server's source guard.
    ///
    /// ```swift
    /// origin.stub("https://images.example/old.jpg", .redirect(to: "https://cdn.example/new.jpg"))
    /// ```
    public static func redirect(to location: String, statusCode: Int = 302) -> MockResponse {
        .data(Data(), statusCode: statusCode, contentType: nil, headers: ["Location": location])
    }

    /// A failure with no response, as when the connection cannot be made.
    public static func failure(_ error: any Error) -> MockResponse {
        MockResponse(statusCode: nil, deliversResponse: false, error: error)
    }

    /// The same response, delivered only as the test advances the load.
    public func held() -> MockResponse {
        var copy = self
        copy.isHeld = true
        return copy
    }

    /// The same response, failing with `error` after its chunks (a body cut short).
    public func failing(with error: any Error) -> MockResponse {
        var copy = self
        copy.error = error
        return copy
    }

    /// The response metadata for `url`; `nil` when none is delivered.
    func urlResponse(for url: URL) -> URLResponse? {
        guard deliversResponse else { return nil }
        if let statusCode, let response = HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: "HTTP/1.1", headerFields: headers) {
            return response
        }
        let length = headers.first { $0.key.lowercased() == "content-length" }.flatMap { Int($0.value) } ?? -1
        let type = headers.first { $0.key.lowercased() == "content-type" }?.value
        return URLResponse(url: url, mimeType: type, expectedContentLength: length, textEncodingName: nil)
    }

    private static func split(_ data: Data, chunkSize: Int?) -> [Data] {
        guard let chunkSize, chunkSize > 0, data.count > chunkSize else { return data.isEmpty ? [] : [data] }
        return stride(from: 0, to: data.count, by: chunkSize).map { start in
            data.subdata(in: data.startIndex + start..<data.startIndex + min(start + chunkSize, data.count))
        }
    }
}
