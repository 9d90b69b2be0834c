import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Wraps any loader and tries a failed request again, as a ``RetryPolicy`` says.
///
/// A retry happens only while nothing of the body has been passed on: after
/// a transport failure before the first body byte (the response is held
/// back until then), or after a retryable status (`429`, `5xx`), whose
/// response and body are held back until it is clear no retry follows.
/// When the retries run out, the last response or failure is passed on
/// unchanged, so validation still names the real status or cause. A failure
/// in the middle of a body that was already streaming is passed on, never
/// retried: the handler has seen those bytes.
///
/// Waits run on an injected ``TimeSource``, so tests need not sleep.
///
/// ```swift
/// let loader = RetryingDataLoader(wrapping: URLSessionDataLoader())
/// let (data, _) = try await loader.data(for: URLRequest(url: url))
/// ```
public final class RetryingDataLoader: DataLoading {
    /// The loader that makes each attempt.
    public let loader: any DataLoading
    /// When to retry.
    public let policy: RetryPolicy
    private let time: TimeSource

    /// Wraps `loader`.
    ///
    /// - Parameter time: Waits between attempts and dates `Retry-After`. Default: ``TimeSource/system``.
    public init(wrapping loader: any DataLoading, policy: RetryPolicy = .default, time: TimeSource = .system) {
        self.loader = loader
        self.policy = policy
        self.time = time
    }

    public func dataTask(
        with request: URLRequest,
        eventHandler: @escaping @Sendable (DataLoadingEvent) -> Void
    ) -> any DataLoadingTask {
        RetryingTask(request: request, loader: loader, policy: policy, time: time, eventHandler: eventHandler)
    }
}

/// One request and its attempts.
private final class RetryingTask: DataLoadingTask {
    private struct State {
        /// The attempt under way, counting from 0.
        var attempt = 0
        var started = false
        var current: (any DataLoadingTask)?
        var wait: Task<Void, Never>?
        /// The response, held until its body starts; a retryable one, with
        /// its body, until the attempt ends.
        var held: (response: URLResponse, body: [Data], retryable: Bool)?
        /// Whether any event other than a held one reached the handler.
        var passedOn = false
        var ended = false
        var cancelled = false
    }

    private let request: URLRequest
    private let loader: any DataLoading
    private let policy: RetryPolicy
    private let time: TimeSource
    private let eventHandler: @Sendable (DataLoadingEvent) -> Void
    private let state = Locked(State())

    init(request: URLRequest, loader: any DataLoading, policy: RetryPolicy, time: TimeSource,
         eventHandler: @escaping @Sendable (DataLoadingEvent) -> Void) {
        self.request = request
        self.loader = loader
        self.policy = policy
        self.time = time
        self.eventHandler = eventHandler
    }

    func resume() {
        let first = state.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started && !state.cancelled
        }
        if first { startAttempt(0) }
    }

    func cancel() {
        let (current, wait) = state.withLock { state -> ((any DataLoadingTask)?, Task<Void, Never>?) in
            state.cancelled = true
            return (state.current, state.wait)
        }
        if let current {
            current.cancel()   // its cancellation failure ends this task
        } else {
            wait?.cancel()
            end(with: .failed(DataLoadingError(.cancelled, url: request.url, message: "the load was cancelled")))
        }
    }

    private func startAttempt(_ attempt: Int) {
        let task = loader.dataTask(with: request) { [self] event in handle(event, attempt: attempt) }
        let cancelled = state.withLock { state -> Bool in
            state.attempt = attempt
            state.current = task
            state.wait = nil
            state.held = nil
            return state.cancelled
        }
        task.resume()
        if cancelled { task.cancel() }
    }

    private func handle(_ event: DataLoadingEvent, attempt: Int) {
        enum Step { case ignore, passOn([DataLoadingEvent]), end(DataLoadingEvent), retry(after: TimeInterval) }
        let step = state.withLock { state -> Step in
            guard state.attempt == attempt, !state.ended else { return .ignore }
            let retriesLeft = policy.allowsRetries(of: request) && attempt < policy.maximumRetries && !state.cancelled
            switch event {
            case .response(let response):
                // Held until the body starts, so a failure before it can still be retried.
                let status = (response as? HTTPURLResponse)?.statusCode
                state.held = (response, [], retriesLeft && status.map(policy.retryableStatusCodes.contains) == true)
                return .ignore
            case .data(let chunk):
                guard let held = state.held else {
                    state.passedOn = true
                    return .passOn([event])
                }
                if held.retryable {
                    state.held?.body.append(chunk)
                    return .ignore
                }
                state.held = nil
                state.passedOn = true
                return .passOn([.response(held.response), event])
            case .finished:
                if let held = state.held, held.retryable, let http = held.response as? HTTPURLResponse,
                   let delay = policy.delay(beforeRetry: attempt + 1, retryAfter: RetryPolicy.retryAfter(in: http, now: time.now())) {
                    state.current = nil
                    return .retry(after: delay)
                }
                return .end(event)
            case .failed(let error):
                let code = (error as? DataLoadingError)?.code
                if retriesLeft, !state.passedOn, let code, policy.retryableErrorCodes.contains(code),
                   let delay = policy.delay(beforeRetry: attempt + 1, retryAfter: nil) {
                    state.current = nil
                    return .retry(after: delay)
                }
                return .end(event)
            }
        }
        switch step {
        case .ignore:
            break
        case .passOn(let events):
            events.forEach(eventHandler)
        case .end(let event):
            end(with: event)
        case .retry(let delay):
            scheduleAttempt(attempt + 1, after: delay)
        }
    }

    /// Passes on anything held, then `event`, and ends the task.
    private func end(with event: DataLoadingEvent) {
        let held = state.withLock { state -> (response: URLResponse, body: [Data], retryable: Bool)?? in
            guard !state.ended else { return nil }
            state.ended = true
            state.current = nil
            defer { state.held = nil }
            return .some(state.held)
        }
        guard let held else { return }
        if let held, case .finished = event {
            eventHandler(.response(held.response))
            for chunk in held.body { eventHandler(.data(chunk)) }
        }
        eventHandler(event)
    }

    private func scheduleAttempt(_ attempt: Int, after delay: TimeInterval) {
        let sleep = time.sleep
        let wait = Task { [self] in
            do {
                try await sleep(delay)
            } catch {
                return   // cancelled: `cancel()` ends the task
            }
            startAttempt(attempt)
        }
        let cancelled = state.withLock { state -> Bool in
            state.wait = wait
            return state.cancelled
        }
        if cancelled {
            wait.cancel()
            end(with: .failed(DataLoadingError(.cancelled, url: request.url, message: "the load was cancelled")))
        }
    }
}
