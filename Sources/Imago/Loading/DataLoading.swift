import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Loads the bytes of a request: the seam between Imago and the network or disk.
///
/// A loader creates a task that has not started yet; the caller starts it
/// with ``DataLoadingTask/resume()``. The task reports what happens through
/// its event handler, in this order: at most one ``DataLoadingEvent/response(_:)``,
/// any number of ``DataLoadingEvent/data(_:)`` chunks, then exactly one
/// ``DataLoadingEvent/finished`` or ``DataLoadingEvent/failed(_:)``.
/// Nothing is reported after that, and nothing after a cancel except the
/// cancellation failure.
///
/// Most callers use the `async` form, ``data(for:progress:)``.
///
/// Imago ships ``DataLoader`` (files and `http(s)`), ``URLSessionDataLoader``
/// and ``FileDataLoader``; `ImagoTesting` ships `MockDataLoader`.
public protocol DataLoading: Sendable {
    /// Creates a task, not yet started, that loads `request`.
    ///
    /// - Parameters:
    ///   - request: What to load.
    ///   - eventHandler: Called with each event, on a thread of the loader's
    ///     choosing, one event at a time.
    func dataTask(
        with request: URLRequest,
        eventHandler: @escaping @Sendable (DataLoadingEvent) -> Void
    ) -> any DataLoadingTask
}

/// A loading task that can be started and cancelled.
public protocol DataLoadingTask: AnyObject, Sendable {
    /// Starts the task. Calling it again has no effect.
    func resume()
    /// Stops the task; its handler then receives a
    /// ``DataLoadingError/Code/cancelled`` failure unless it already finished.
    func cancel()
}

/// What a ``DataLoadingTask`` reports.
public enum DataLoadingEvent: Sendable {
    /// The response metadata arrived (status and headers for HTTP).
    case response(URLResponse)
    /// A chunk of the body arrived.
    case data(Data)
    /// The body is complete.
    case finished
    /// The task failed or was cancelled; no more events follow.
    case failed(any Error)
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
