import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension NetworkClient {
    /// Fetches `url` with a plain `GET` and decodes its JSON body as `T`.
    ///
    /// The same as ``json(_:for:makeDecoder:)`` with `URLRequest(url: url)`,
    /// without the `FoundationNetworking` import that `URLRequest` needs on Linux.
    ///
    /// ```swift
    /// let feed = try await client.json(Feed.self, from: feedURL)
    /// ```
    public func json<T: Decodable & SendableMetatype>(
        _ type: T.Type = T.self,
        from url: URL,
        makeDecoder: @escaping @Sendable () -> JSONDecoder = { JSONDecoder() }
    ) async throws -> T {
        try await json(type, for: URLRequest(url: url), makeDecoder: makeDecoder)
    }

    /// Fetches `url` with a plain `GET` and returns its body unchanged, after
    /// the content-type (`accepting`) and status checks.
    ///
    /// The same as ``data(for:accepting:progress:)`` with `URLRequest(url: url)`.
    ///
    /// ```swift
    /// let png = try await client.data(from: iconURL, accepting: .images)
    /// ```
    public func data(
        from url: URL,
        accepting: AcceptedContentTypes = .anything,
        progress: (@Sendable (LoadingProgress) -> Void)? = nil
    ) async throws -> Data {
        try await data(for: URLRequest(url: url), accepting: accepting, progress: progress)
    }

    /// Fetches `url` with a plain `GET` and decodes its body as an image.
    ///
    /// The same as ``image(for:options:progress:)`` with `URLRequest(url: url)`.
    ///
    /// ```swift
    /// let thumbnail = try await client.image(from: url, options: ImageDecodingOptions(maximumPixelSize: 256))
    /// ```
    public func image(
        from url: URL,
        options: ImageDecodingOptions = ImageDecodingOptions(),
        progress: (@Sendable (LoadingProgress) -> Void)? = nil
    ) async throws -> Image {
        try await image(for: URLRequest(url: url), options: options, progress: progress)
    }
}
