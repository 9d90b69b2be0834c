import Foundation
import Imago
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One load a ``MockDataLoader`` made: its request, its scripted steps, and
/// whether the code under test cancelled it.
///
/// The steps are the response (which lets `load` return), each chunk of the
/// body, and the end. They are delivered at once, unless the response is
/// held: then the test releases them with ``advance()`` or ``complete()``.
public final class MockDataTask: Sendable {
    private struct State {
        var steps: [@Sendable () -> Void]
        var isCancelled = false
    }

    /// The request the load was made for.
    public let request: URLRequest
    /// Whether the load waits for the test to release its steps.
    public let isHeld: Bool
    private let state: Locked<State>
    /// Carries the response, or the failure before it, to `load`.
    private let head: AsyncThrowingStream<DataLoadingResponse, any Error>

    init(request: URLRequest, response: MockResponse) {
        let state = Locked(State(steps: []))
        let (head, heads) = AsyncThrowingStream.makeStream(of: DataLoadingResponse.self)
        // The code under test stopped waiting for the response, or stopped reading the body.
        heads.onTermination = { [weak state] in if case .cancelled = $0 { state?.withLock { $0.isCancelled = true } } }
        if !response.deliversResponse && response.chunks.isEmpty, let error = response.error {
            state.withLock { $0.steps = [{ heads.finish(throwing: error) }] }
        } else {
            let (body, chunks) = AsyncThrowingStream.makeStream(of: Data.self)
            chunks.onTermination = { [weak state] in if case .cancelled = $0 { state?.withLock { $0.isCancelled = true } } }
            let loaded = DataLoadingResponse(response: response.urlResponse(for: request.url ?? URL(fileURLWithPath: "/")), body: body)
            var steps: [@Sendable () -> Void] = [{ heads.yield(loaded); heads.finish() }]
            steps += response.chunks.map { chunk in { chunks.yield(chunk) } }
            steps.append { [error = response.error] in chunks.finish(throwing: error) }
            state.withLock { $0.steps = steps }
        }
        self.request = request
        self.isHeld = response.isHeld
        self.head = head
        self.state = state
    }

    /// Whether the code under test stopped the load before its end: cancelled
    /// it while waiting for the response, or stopped reading the body.
    public var isCancelled: Bool { state.withLock { $0.isCancelled } }
    /// How many scripted steps have not been delivered.
    public var remainingStepCount: Int { state.withLock { $0.steps.count } }

    /// Delivers the next step; returns `false` when none was left or the load
    /// was cancelled.
    @discardableResult
    public func advance() -> Bool {
        let step = state.withLock { $0.isCancelled || $0.steps.isEmpty ? nil : $0.steps.removeFirst() }
        step?()
        return step != nil
    }

    /// Delivers every remaining step.
    public func complete() {
        while advance() {}
    }

    /// Runs the load for ``MockDataLoader``: returns at the response, throws
    /// a failure before it, or `CancellationError` when cancelled first.
    func load() async throws -> DataLoadingResponse {
        if !isHeld { complete() }
        for try await loaded in head { return loaded }
        throw CancellationError()
    }
}
