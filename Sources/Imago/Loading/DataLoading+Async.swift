import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DataLoading {
    /// Loads the whole body of `request` and its response.
    ///
    /// Cancelling the calling Swift task cancels the loading task and throws
    /// `CancellationError`.
    ///
    /// - Parameter progress: Called after each chunk with the bytes received
    ///   so far and the expected total.
    /// - Returns: The body and the response. A loader that reports no
    ///   response metadata yields a plain `URLResponse` for the request URL.
    /// - Throws: What the loader reported as a failure, unchanged, or
    ///   `CancellationError`.
    public func data(
        for request: URLRequest,
        progress: (@Sendable (LoadingProgress) -> Void)? = nil
    ) async throws -> (Data, URLResponse) {
        let load = AsyncLoad(request: request, progress: progress)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                load.start(with: self, continuation: continuation)
            }
        } onCancel: {
            load.cancel()
        }
    }
}

/// The state of one ``DataLoading/data(for:progress:)`` call, shared between
/// the loader's event handler and the cancellation handler.
private final class AsyncLoad: Sendable {
    private struct State {
        var continuation: CheckedContinuation<(Data, URLResponse), any Error>?
        var task: (any DataLoadingTask)?
        var response: URLResponse?
        var body = Data()
        var isCancelled = false
    }

    private let request: URLRequest
    private let progress: (@Sendable (LoadingProgress) -> Void)?
    private let state = Locked(State())

    init(request: URLRequest, progress: (@Sendable (LoadingProgress) -> Void)?) {
        self.request = request
        self.progress = progress
    }

    func start(with loader: some DataLoading, continuation: CheckedContinuation<(Data, URLResponse), any Error>) {
        let alreadyCancelled = state.withLock { state in
            state.continuation = continuation
            return state.isCancelled
        }
        if alreadyCancelled {
            finish(with: .failure(CancellationError()))
            return
        }
        let task = loader.dataTask(with: request) { [self] event in handle(event) }
        let cancelledMeanwhile = state.withLock { state in
            state.task = task
            return state.isCancelled
        }
        if cancelledMeanwhile {
            task.cancel()
        } else {
            task.resume()
        }
    }

    func cancel() {
        let task = state.withLock { state in
            state.isCancelled = true
            return state.task
        }
        // Resume first: a loader may report its own cancellation failure
        // synchronously from `cancel()`, and the caller should see CancellationError.
        finish(with: .failure(CancellationError()))
        task?.cancel()
    }

    private func handle(_ event: DataLoadingEvent) {
        switch event {
        case .response(let response):
            state.withLock { state in
                state.response = response
                // Room for the announced body up front (capped: the header may lie).
                let expected = response.expectedContentLength
                if expected > 0 && state.body.isEmpty { state.body.reserveCapacity(Int(min(expected, 16 << 20))) }
            }
        case .data(let chunk):
            let report = state.withLock { state -> LoadingProgress? in
                guard state.continuation != nil else { return nil }
                state.body.append(chunk)
                let expected = state.response?.expectedContentLength ?? -1
                return LoadingProgress(completed: Int64(state.body.count), total: expected >= 0 ? expected : nil)
            }
            if let report { progress?(report) }
        case .finished:
            let result = state.withLock { state in
                (state.body, state.response ?? URLResponse(
                    url: request.url ?? URL(fileURLWithPath: "/"),
                    mimeType: nil,
                    expectedContentLength: state.body.count,
                    textEncodingName: nil
                ))
            }
            finish(with: .success(result))
        case .failed(let error):
            finish(with: .failure(error))
        }
    }

    /// Resumes the continuation once; later calls do nothing.
    ///
    /// Also lets go of the task: its event handler holds this object, so
    /// keeping it would be a cycle that keeps the body, and whatever the
    /// progress handler holds, alive for good.
    private func finish(with result: Result<(Data, URLResponse), any Error>) {
        let continuation = state.withLock { state in
            defer { state.continuation = nil; state.body = Data(); state.task = nil }
            return state.continuation
        }
        continuation?.resume(with: result)
    }
}
