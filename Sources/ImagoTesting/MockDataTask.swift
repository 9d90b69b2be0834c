import Foundation
import Imago
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One load a ``MockDataLoader`` made: its request, and what the code under
/// test did with it.
///
/// Unless its response is held, the load delivers everything at once. A held
/// one waits for the test: ``advance()`` delivers the next step (the
/// response, which lets `load` return; a chunk; the end), ``complete()``
/// all of them.
public final class MockDataTask: Sendable {
    /// One step of a scripted load.
    enum Step: Sendable {
        /// The response metadata (`nil` for none): `load` returns.
        case head(URLResponse?)
        /// A chunk of the body.
        case chunk(Data)
        /// The end: the body ends, or the load fails with the error.
        case end((any Error)?)
    }

    private struct State {
        var steps: [Step]
        /// The body's continuation, once the head is out.
        var chunks: AsyncThrowingStream<Data, any Error>.Continuation?
        var isCancelled = false
        var isFinished = false
    }

    /// The request the load was made for.
    public let request: URLRequest
    /// Whether the load waits for the test to deliver its steps.
    public let isHeld: Bool
    private let state: Locked<State>
    /// Carries the head (or the failure before it) to `load`.
    private let head: AsyncThrowingStream<DataLoadingResponse, any Error>
    private let heads: AsyncThrowingStream<DataLoadingResponse, any Error>.Continuation

    init(request: URLRequest, response: MockResponse) {
        self.request = request
        self.isHeld = response.isHeld
        self.state = Locked(State(steps: response.steps(for: request.url ?? URL(fileURLWithPath: "/"))))
        (head, heads) = AsyncThrowingStream.makeStream(of: DataLoadingResponse.self)
        heads.onTermination = { [weak self] in if case .cancelled = $0 { self?.cancelled() } }
    }

    /// Whether the code under test stopped the load before it ended:
    /// cancelled while waiting for the response, or stopped reading the body.
    public var isCancelled: Bool { state.withLock { $0.isCancelled } }
    /// Whether the load has ended: its last step delivered, or cancelled.
    public var isFinished: Bool { state.withLock { $0.isFinished } }
    /// How many scripted steps are still to be delivered: the response (or
    /// the start of a body without one), each chunk, and the end.
    public var remainingStepCount: Int { state.withLock { $0.steps.count } }

    /// Delivers the next step; returns `false` when none was left or the
    /// load was cancelled.
    @discardableResult
    public func advance() -> Bool {
        typealias Chunks = AsyncThrowingStream<Data, any Error>.Continuation
        enum Action {
            case head(DataLoadingResponse)
            case chunk(Data, Chunks?)
            case end((any Error)?, Chunks?)
        }
        let action = state.withLock { state -> Action? in
            guard !state.isFinished, !state.steps.isEmpty else { return nil }
            let step = state.steps.removeFirst()
            if state.steps.isEmpty { state.isFinished = true }
            switch step {
            case .head(let response):
                let (body, chunks) = AsyncThrowingStream.makeStream(of: Data.self)
                chunks.onTermination = { [weak self] in if case .cancelled = $0 { self?.cancelled() } }
                state.chunks = chunks
                return .head(DataLoadingResponse(response: response, body: body))
            case .chunk(let data):
                return .chunk(data, state.chunks)
            case .end(let error):
                return .end(error, state.chunks)
            }
        }
        switch action {
        case nil:
            return false
        case .head(let loaded)?:
            heads.yield(loaded)
            heads.finish()
        case .chunk(let data, let chunks)?:
            chunks?.yield(data)
        case .end(let error, let chunks?)?:
            chunks.finish(throwing: error)
        case .end(let error, nil)?:
            heads.finish(throwing: error)
        }
        return true
    }

    /// Delivers every remaining step.
    public func complete() {
        while advance() {}
    }

    /// Runs the load for ``MockDataLoader``: returns at the head, throws a
    /// failure before it, or `CancellationError` when cancelled first.
    func load() async throws -> DataLoadingResponse {
        if !isHeld { complete() }
        for try await loaded in head { return loaded }
        throw CancellationError()
    }

    /// Records that the load's reader went away before its end.
    private func cancelled() {
        state.withLock { state in
            state.isCancelled = true
            state.isFinished = true
            state.steps = []
        }
    }
}
