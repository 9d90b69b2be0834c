import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Fetches a request and decodes the response: JSON into a `Decodable`
/// value, or image bytes into an ``Image``.
///
/// Each call loads through a ``DataLoading`` (the session layer), then runs
/// a ``ResponseHandler`` (the handler layer: content type, status, decode).
/// A failure of either layer is wrapped in a ``NetworkClientError`` with its
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
    /// - Throws: ``NetworkClientError``, or `CancellationError` when the
    ///   calling task is cancelled.
    public func image(
        for request: URLRequest,
        options: ImageDecodingOptions = ImageDecodingOptions(),
        progress: (@Sendable (LoadingProgress) -> Void)? = nil
    ) async throws -> Image {
        try await fetch(request, handler: .image(decoder: imageDecoder, options: options), progress: progress)
    }

    /// Fetches `request` and turns the response into `Output` with `handler`.
    ///
    /// The other operations are built on this one.
    public func fetch<Output>(
        _ request: URLRequest,
        handler: ResponseHandler<Output>,
        progress: (@Sendable (LoadingProgress) -> Void)? = nil
    ) async throws -> Output {
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await loader.data(for: request, progress: progress)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw NetworkClientError(.sessionFailed, url: request.url, underlying: error)
        }
        do {
            return try handler.handle(data, response: response, for: request.url)
        } catch {
            throw NetworkClientError(.handlerFailed, url: request.url, underlying: error)
        }
    }
}
