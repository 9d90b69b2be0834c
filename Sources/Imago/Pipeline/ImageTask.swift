import Foundation

/// One request in flight: its result, its progress, its priority, and a way to cancel it.
///
/// ```swift
/// let task = pipeline.imageTask(for: request)
/// task.setPriority(.high)
/// for await event in task.events { if case .progress(let p) = event { print(p.fraction ?? 0) } }
/// let response = try await task.response
/// ```
public final class ImageTask: Sendable {
    /// What a task reports, in order: progress (zero or more times), then one completion.
    public enum Event: Sendable {
        /// Bytes received for the download this task shares.
        case progress(LoadingProgress)
        /// The task ended.
        case finished(Result<ImageResponse, any Error>)
    }

    /// The request.
    public let request: ImageRequest
    /// The events, as an `AsyncStream`; it ends after ``Event/finished(_:)``.
    public let events: AsyncStream<Event>

    private let subscription: JobSubscription
    private let task: Task<ImageResponse, any Error>

    init(request: ImageRequest, pipeline: ImagePipeline) {
        self.request = request
        let subscription = JobSubscription(priority: request.priority)
        self.subscription = subscription
        let (events, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .unbounded)
        self.events = events
        // Starts on the caller's thread: a load whose stages all answer at
        // once is finished when this initializer returns.
        task = startImmediately {
            let result: Result<ImageResponse, any Error>
            do {
                result = .success(try await pipeline.run(request, subscription: subscription) { continuation.yield(.progress($0)) })
            } catch {
                result = .failure(error)
            }
            continuation.yield(.finished(result))
            continuation.finish()
            return try result.get()
        }
    }

    /// The response, once loaded.
    ///
    /// - Throws: ``ImagePipelineError``, or `CancellationError` after ``cancel()``.
    public var response: ImageResponse {
        get async throws { try await task.value }
    }

    /// The current priority.
    public var priority: ImageRequest.Priority { subscription.priority }

    /// Changes the priority; work shared with other tasks runs at the highest
    /// priority any of them asks for.
    public func setPriority(_ priority: ImageRequest.Priority) {
        subscription.setPriority(priority)
    }

    /// Cancels this task's share of the work; shared work continues while
    /// another task still wants it.
    public func cancel() {
        task.cancel()
    }
}
