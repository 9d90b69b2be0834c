import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Loads the bytes of a request: the seam between Imago and the network or disk.
///
/// ``load(_:)`` returns once the response metadata has arrived; the body
/// follows as a stream of chunks, so a limit can be enforced and progress
/// reported while it streams. Most callers want the whole body and use
/// ``data(for:progress:)``.
///
/// Cancellation is the caller's Swift task: cancelling it while `load`
/// waits, or while the body is read, stops the load. A consumer that stops
/// reading the body early (the stream is dropped) stops it too.
///
/// Imago ships ``DataLoader`` (files and `http(s)`), ``URLSessionDataLoader``,
/// ``FileDataLoader`` and ``RetryingDataLoader``; `ImagoTesting` ships
/// `MockDataLoader`. A loader of your own:
///
/// ```swift
/// struct BundleLoader: DataLoading {
///     func load(_ request: URLRequest) async throws -> DataLoadingResponse {
///         let data = try Data(contentsOf: request.url!)
///         return DataLoadingResponse(response: nil, data: data)
///     }
/// }
/// ```
public protocol DataLoading: Sendable {
    /// Starts loading `request` and returns once the response metadata
    /// arrived; the body follows in ``DataLoadingResponse/body``.
    ///
    /// - Throws: A failure before the response metadata (a loader's own
    ///   ``DataLoadingError``, say), or `CancellationError` when the calling
    ///   task is cancelled. A failure later in the body ends the body's stream.
    func load(_ request: URLRequest) async throws -> DataLoadingResponse
}

/// What ``DataLoading/load(_:)`` returns: the response metadata and the body
/// still to come.
public struct DataLoadingResponse: Sendable {
    /// The response metadata (status and headers for HTTP); `nil` from a
    /// loader that has none.
    public var response: URLResponse?
    /// The body, chunk by chunk. It ends when the body is complete, or
    /// throws the failure that cut it short. Dropping it, or cancelling the
    /// task reading it, stops the load.
    public var body: AsyncThrowingStream<Data, any Error>

    /// Creates a response from its metadata and a stream of body chunks.
    public init(response: URLResponse?, body: AsyncThrowingStream<Data, any Error>) {
        self.response = response
        self.body = body
    }

    /// Creates a response whose body is already known, delivered as one chunk
    /// (none when empty).
    public init(response: URLResponse?, data: Data) {
        self.init(response: response, body: AsyncThrowingStream { continuation in
            if !data.isEmpty { continuation.yield(data) }
            continuation.finish()
        })
    }
}

/// How much of a body has arrived.
public struct LoadingProgress: Sendable, Hashable {
    /// Bytes received so far.
    public var completed: Int64
    /// The expected length, when the response declared one.
    public var total: Int64?

    /// Creates a progress value.
    public init(completed: Int64, total: Int64?) {
        self.completed = completed
        self.total = total
    }

    /// The fraction received, from 0 to 1, when the total is known.
    public var fraction: Double? {
        guard let total, total > 0 else { return nil }
        return min(1, Double(completed) / Double(total))
    }
}
