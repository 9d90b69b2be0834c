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

    public func dataTask(
        with request: URLRequest,
        eventHandler: @escaping @Sendable (DataLoadingEvent) -> Void
    ) -> any DataLoadingTask {
        switch request.url?.scheme?.lowercased() {
        case "http", "https":
            network.dataTask(with: request, eventHandler: eventHandler)
        case "file":
            file.dataTask(with: request, eventHandler: eventHandler)
        default:
            FailingTask(
                error: DataLoadingError(
                    .unsupportedScheme,
                    url: request.url,
                    message: "only http, https and file URLs can be loaded"
                ),
                eventHandler: eventHandler
            )
        }
    }
}

/// A task that fails as soon as it is resumed.
private final class FailingTask: DataLoadingTask {
    private let error: DataLoadingError
    private let eventHandler: @Sendable (DataLoadingEvent) -> Void
    private let once = OnceFlag()

    init(error: DataLoadingError, eventHandler: @escaping @Sendable (DataLoadingEvent) -> Void) {
        self.error = error
        self.eventHandler = eventHandler
    }

    func resume() {
        if once.claim() { eventHandler(.failed(error)) }
    }

    func cancel() {
        if once.claim() {
            eventHandler(.failed(DataLoadingError(.cancelled, url: error.url, message: "the load was cancelled")))
        }
    }
}
