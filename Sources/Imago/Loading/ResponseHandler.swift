import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Checks a response and decodes its body, in a fixed order that stops at
/// the first failure:
///
/// 1. the content type, against ``acceptedContentTypes``;
/// 2. the status: for `http(s)` URLs the response must be an
///    `HTTPURLResponse` with a status in 200...299 (`file` URLs have no
///    status and skip this check);
/// 3. decoding the body.
///
/// A later step never runs after an earlier one failed.
///
/// ```swift
/// let handler = ResponseHandler<Image>.image(decoder: decoders)
/// let image = try handler.handle(data, response: response, for: url)
/// ```
public struct ResponseHandler<Output>: Sendable {
    /// The content types this handler accepts.
    public let acceptedContentTypes: AcceptedContentTypes
    private let decodeBody: @Sendable (Data) throws -> Output

    /// Creates a handler from a content-type rule and a body decoder.
    ///
    /// - Parameter decode: Turns the body into the output; whatever it
    ///   throws becomes the ``ResponseError/underlying`` error, unchanged.
    public init(accepting acceptedContentTypes: AcceptedContentTypes, decode: @escaping @Sendable (Data) throws -> Output) {
        self.acceptedContentTypes = acceptedContentTypes
        self.decodeBody = decode
    }

    /// Validates the response and decodes the body.
    ///
    /// - Parameter url: The requested URL; its scheme says whether an HTTP
    ///   response is required. Defaults to the response's URL.
    /// - Throws: ``ResponseError``.
    public func handle(_ data: Data, response: URLResponse, for url: URL? = nil) throws(ResponseError) -> Output {
        let checked = try CheckedResponse(response, for: url, accepting: acceptedContentTypes)
        return try checked.decodeBody { try decodeBody(data) }
    }
}

extension ResponseHandler where Output == Image {
    /// A handler for images: accepts ``AcceptedContentTypes/images`` and
    /// decodes with `decoder`.
    public static func image(
        decoder: any ImageDecoding,
        options: ImageDecodingOptions = ImageDecodingOptions()
    ) -> ResponseHandler<Image> {
        ResponseHandler(accepting: .images) { data in try decoder.decode(data, options: options) }
    }
}

extension ResponseHandler where Output: Decodable & SendableMetatype {
    /// A handler for JSON: accepts ``AcceptedContentTypes/json`` and decodes
    /// `Output` with a `JSONDecoder` that `makeDecoder` configures.
    public static func json(
        _ type: Output.Type = Output.self,
        makeDecoder: @escaping @Sendable () -> JSONDecoder = { JSONDecoder() }
    ) -> ResponseHandler<Output> {
        ResponseHandler(accepting: .json) { data in try makeDecoder().decode(Output.self, from: data) }
    }
}

