import Foundation
import Imago
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The task a ``MockDataLoader`` creates: records every `resume()` and
/// `cancel()`, and delivers its scripted events when resumed, or step by
/// step when the response is held.
public final class MockDataTask: DataLoadingTask {
    private struct State {
        var resumeCount = 0
        var cancelCount = 0
        var remaining: [DataLoadingEvent]
        var isFinished = false
    }

    /// The request the task was created for.
    public let request: URLRequest
    /// Whether the task waits for the test to deliver its events.
    public let isHeld: Bool
    private let eventHandler: @Sendable (DataLoadingEvent) -> Void
    private let onCancel: @Sendable (MockDataTask) -> Void
    private let state: Locked<State>

    init(
        request: URLRequest,
        response: MockResponse,
        eventHandler: @escaping @Sendable (DataLoadingEvent) -> Void,
        onCancel: @escaping @Sendable (MockDataTask) -> Void
    ) {
        self.request = request
        self.isHeld = response.isHeld
        self.eventHandler = eventHandler
        self.onCancel = onCancel
        self.state = Locked(State(remaining: response.events(for: request.url ?? URL(fileURLWithPath: "/"))))
    }

    /// How many times `resume()` was called.
    public var resumeCount: Int { state.withLock { $0.resumeCount } }
    /// How many times `cancel()` was called.
    public var cancelCount: Int { state.withLock { $0.cancelCount } }
    /// Whether the task has delivered its final event (finished, failed or cancelled).
    public var isFinished: Bool { state.withLock { $0.isFinished } }
    /// How many scripted events are still to be delivered.
    public var remainingEventCount: Int { state.withLock { $0.remaining.count } }

    /// Starts the task: unless held, delivers every scripted event now, on
    /// the caller's thread. A second call only counts.
    public func resume() {
        let first = state.withLock { state in
            state.resumeCount += 1
            return state.resumeCount == 1
        }
        if first && !isHeld { complete() }
    }

    /// Records the call and, if the task has not finished, delivers a
    /// ``DataLoadingError/Code/cancelled`` failure and drops the rest.
    public func cancel() {
        let wasLive = state.withLock { state in
            state.cancelCount += 1
            defer { state.isFinished = true; state.remaining = [] }
            return !state.isFinished
        }
        onCancel(self)
        if wasLive {
            eventHandler(.failed(DataLoadingError(.cancelled, url: request.url, message: "the load was cancelled")))
        }
    }

    /// Delivers the next scripted event; returns `false` when none was left.
    ///
    /// Use it with a held response to step through response, chunks and
    /// completion. Works whether or not the task was resumed, so a test can
    /// also check what happens when a loader misbehaves.
    @discardableResult
    public func advance() -> Bool {
        let event = state.withLock { state -> DataLoadingEvent? in
            guard !state.isFinished, !state.remaining.isEmpty else { return nil }
            let event = state.remaining.removeFirst()
            if state.remaining.isEmpty { state.isFinished = true }
            return event
        }
        guard let event else { return false }
        eventHandler(event)
        return true
    }

    /// Delivers every remaining event.
    public func complete() {
        while advance() {}
    }
}
