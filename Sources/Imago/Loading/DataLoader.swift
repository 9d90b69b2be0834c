import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The default loader: `http` and `https` URLs go to a network loader,
/// `file` URLs to a file loader, anything else fails with
/// ``DataLoadingError/Code/unsupportedScheme``.
///
/// The default network loader is a ``URLSessionDataLoader`` wrapped in a
/// ``RetryingDataLoader`` with the default ``RetryPolicy``.
///
/// ```swift
/// let (data, response) = try await DataLoader.shared.data(for: URLRequest(url: url))
/// ```
public struct DataLoader: DataLoading {
    /// The default limit on a response body: 25 MB.
    public static let defaultMaximumResponseSize = 25 * 1024 * 1024

    /// A loader shared by everything that does not inject its own.
    public static let shared = DataLoader()

    /// The loader for `http` and `https` URLs.
    public let network: any DataLoading
    /// The loader for `file` URLs.
    public let file: any DataLoading

    /// Creates a loader from a network loader and a file loader.
    public init(
        network: any DataLoading = RetryingDataLoader(wrapping: URLSessionDataLoader()),
        file: any DataLoading = FileDataLoader()
    ) {
        self.network = network
        self.file = file
    }

    /// Loads `request` with ``network`` or ``file`` by its URL's scheme.
    ///
    /// - Throws: ``DataLoadingError/Code/unsupportedScheme`` for any scheme
    ///   but `http`, `https` and `file`; else what the chosen loader throws.
    public func load(_ request: URLRequest) async throws -> DataLoadingResponse {
        switch request.url?.scheme?.lowercased() {
        case "http", "https":
            try await network.load(request)
        case "file":
            try await file.load(request)
        default:
            throw DataLoadingError(
                .unsupportedScheme,
                url: request.url,
                message: "only http, https and file URLs can be loaded"
            )
        }
    }
}
