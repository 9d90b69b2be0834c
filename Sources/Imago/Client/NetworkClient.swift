import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Fetches a request and decodes the response: JSON into a `Decodable`
/// value, image bytes into an ``Image``, or the raw bytes.
///
/// Each call loads through a ``DataLoading`` (the session layer), then
/// checks the response and decodes the body (the handler layer: content
/// type, status, decode, in that order). Images are checked and decoded by
/// the same functions as in ``ImagePipeline``'s data and decode stages. A
/// failure of either layer is wrapped in a ``NetworkClientError`` with its
/// own code, the original error passed through unchanged.
///
/// ```swift
/// let client = NetworkClient(imageDecoder: decoders)
/// let feed = try await client.json(Feed.self, for: URLRequest(url: feedURL))
/// let artwork = try await client.image(for: URLRequest(url: feed.artworkURL))
/// ```
public struct NetworkClient: Sendable {
    /// Loads the bytes.
    public let loader: any DataLoading
    /// Decodes image bodies.
    public let imageDecoder: any ImageDecoding

    /// Creates a client.
    ///
    /// - Parameters:
    ///   - loader: The session layer; by default ``DataLoader/shared``.
    ///   - imageDecoder: Decodes images; `ImagoCodecs` provides one for
    ///     every format. The default registry is empty and rejects every
    ///     image with ``ImageDecodingError/Code/unsupportedFormat``.
    public init(loader: any DataLoading = DataLoader.shared, imageDecoder: any ImageDecoding = ImageDecoderRegistry()) {
        self.loader = loader
        self.imageDecoder = imageDecoder
    }

    /// Fetches `request` and decodes its JSON body as `T`.
    ///
    /// - Throws: ``NetworkClientError`` (``NetworkClientError/Code/sessionFailed``
    ///   or ``NetworkClientError/Code/handlerFailed``), or `CancellationError`
    ///   when the calling task is cancelled.
    public func json<T: Decodable & SendableMetatype>(
        _ type: T.Type = T.self,
        for request: URLRequest,
        makeDecoder: @escaping @Sendable () -> JSONDecoder = { JSONDecoder() }
    ) async throws -> T {
        try await fetch(request, handler: .json(type, makeDecoder: makeDecoder))
    }

    /// Fetches `request` and decodes its body as an image.
    ///
    /// The response must be an image (``AcceptedContentTypes/images``) with
    /// a 2xx status; the body is decoded with ``imageDecoder`` on the
    /// calling task. The checks and the decode are those of
    /// ``ImagePipeline``, so both reject the same responses with the same
    /// ``ResponseError`` codes.
    ///
    /// - Throws: ``NetworkClientError``: ``NetworkClientError/Code/sessionFailed``
    ///   with the loader's error, or ``NetworkClientError/Code/handlerFailed``
    ///   with a ``ResponseError`` (for a body that does not decode,
    ///   ``ResponseError/Code/decodingFailed`` with the decoder's error);
    ///   or `CancellationError` when the calling task is cancelled.
    public func image(
        for request: URLRequest,
        options: ImageDecodingOptions = ImageDecodingOptions(),
        progress: (@Sendable (LoadingProgress) -> Void)? = nil
    ) async throws -> Image {
        let (data, response) = try await load(request, progress: progress)
        do {
            let checked = try CheckedResponse(response, for: request.url, accepting: .images)
            return try checked.decodeBody { try DecodeStage.decode(data, with: imageDecoder, options: options) }
        } catch {
            throw NetworkClientError(.handlerFailed, url: request.url, underlying: error)
        }
    }

    /// Fetches `request` and returns its body unchanged, once the response
    /// passed the content-type and status checks: for bytes to save or to
    /// decode yourself.
    ///
    /// ```swift
    /// let archive = try await client.data(for: URLRequest(url: archiveURL))
    /// let png = try await client.data(for: URLRequest(url: iconURL), accepting: .images)
    /// ```
    ///
    /// - Parameters:
    ///   - accepting: The content types the response may have; by default any.
    ///   - progress: Called after each chunk with the bytes received so far.
    /// - Throws: ``NetworkClientError`` (``NetworkClientError/Code/sessionFailed``
    ///   or ``NetworkClientError/Code/handlerFailed``), or `CancellationError`
    ///   when the calling task is cancelled.
    public func data(
        for request: URLRequest,
        accepting: AcceptedContentTypes = .anything,
        progress: (@Sendable (LoadingProgress) -> Void)? = nil
    ) async throws -> Data {
        try await fetch(request, handler: ResponseHandler(accepting: accepting) { $0 }, progress: progress)
    }

    /// Fetches `request` and turns the response into `Output` with `handler`.
    ///
    /// ``json(_:for:makeDecoder:)`` and ``data(for:accepting:progress:)`` are built on this one.
    public func fetch<Output>(
        _ request: URLRequest,
        handler: ResponseHandler<Output>,
        progress: (@Sendable (LoadingProgress) -> Void)? = nil
    ) async throws -> Output {
        let (data, response) = try await load(request, progress: progress)
        do {
            return try handler.handle(data, response: response, for: request.url)
        } catch {
            throw NetworkClientError(.handlerFailed, url: request.url, underlying: error)
        }
    }

    /// The session layer: the body and response, or the loader's failure as
    /// a ``NetworkClientError/Code/sessionFailed`` error.
    private func load(_ request: URLRequest, progress: (@Sendable (LoadingProgress) -> Void)?) async throws -> (Data, URLResponse) {
        do {
            return try await loader.data(for: request, progress: progress)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw NetworkClientError(.sessionFailed, url: request.url, underlying: error)
        }
    }
}
