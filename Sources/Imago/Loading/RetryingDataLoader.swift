import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Wraps any loader and tries a failed request again, as a ``RetryPolicy`` says.
///
/// A retry happens only while nothing of the body has been passed on: after
/// a transport failure before the first body byte (``load(_:)`` returns the
/// response only once the first chunk arrived), or after a retryable status
/// (`429`, `5xx`), whose response and body are held back until it is clear
/// no retry follows.
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

    /// Loads `request`, trying again as ``policy`` says.
    ///
    /// - Throws: The last attempt's failure, unchanged, or `CancellationError`
    ///   when the calling task is cancelled during a wait.
    public func load(_ request: URLRequest) async throws -> DataLoadingResponse {
        let retries = policy.allowsRetries(of: request) ? policy.maximumRetries : 0
        var attempt = 0
        while true {
            let retriesLeft = attempt < retries
            let wait: TimeInterval
            do {
                let loaded = try await loader.load(request)
                guard retriesLeft else { return loaded }
                guard let http = loaded.response as? HTTPURLResponse, policy.retryableStatusCodes.contains(http.statusCode) else {
                    return try await Self.startingBody(of: loaded)
                }
                var held: [Data] = []
                for try await chunk in loaded.body { held.append(chunk) }
                try Task.checkCancellation()
                let retryAfter = RetryPolicy.retryAfter(in: http, now: time.now())
                guard let delay = policy.delay(beforeRetry: attempt + 1, retryAfter: retryAfter) else {
                    return DataLoadingResponse(response: http, body: AsyncThrowingStream { body in
                        for chunk in held { body.yield(chunk) }
                        body.finish()
                    })
                }
                wait = delay
            } catch let error as DataLoadingError where retriesLeft && policy.retryableErrorCodes.contains(error.code) && !Task.isCancelled {
                guard let delay = policy.delay(beforeRetry: attempt + 1, retryAfter: nil) else { throw error }
                wait = delay
            }
            try await time.sleep(wait)
            attempt += 1
        }
    }

    /// `loaded` once its first chunk has arrived (or its body ended), so
    /// that a failure before any byte of the body is thrown here, where it
    /// can still be retried.
    private static func startingBody(of loaded: DataLoadingResponse) async throws -> DataLoadingResponse {
        var chunks = loaded.body.makeAsyncIterator()
        guard let first = try await chunks.next() else { return DataLoadingResponse(response: loaded.response, data: Data()) }
        // The first chunk, then the rest relayed as it comes.
        let (body, continuation) = AsyncThrowingStream.makeStream(of: Data.self)
        continuation.yield(first)
        let relay = Task { [chunks] in
            var chunks = chunks
            do {
                while let chunk = try await chunks.next() { continuation.yield(chunk) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in relay.cancel() }
        return DataLoadingResponse(response: loaded.response, body: body)
    }
}
