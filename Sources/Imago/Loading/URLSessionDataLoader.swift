import Foundation
import Logging
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Loads `http` and `https` URLs with `URLSession` (FoundationNetworking on Linux).
///
/// The loader owns one ephemeral session (no `URLCache`: Imago caches on its
/// own terms) and enforces ``Configuration/maximumResponseSize`` both from
/// `Content-Length` and while the body streams in. Redirects are followed up
/// to ``Configuration/maximumRedirects``; one more fails with
/// ``DataLoadingError/Code/tooManyRedirects``, and a redirect back to a URL
/// already visited fails with ``DataLoadingError/Code/redirectLoop``. When
/// following is off, the 3xx response itself is reported and validation
/// rejects it.
///
/// The loader makes one attempt per request; wrap it in a
/// ``RetryingDataLoader`` (as ``DataLoader`` does by default) to retry.
public final class URLSessionDataLoader: DataLoading {
    /// Settings for the session and its limits.
    public struct Configuration: Sendable {
        /// The largest body accepted, in bytes. Default: 25 MB.
        public var maximumResponseSize: Int = DataLoader.defaultMaximumResponseSize
        /// Whether 3xx responses with a `Location` are followed.
        public var followsRedirects: Bool = true
        /// How many redirects one request may follow. Default: 5.
        public var maximumRedirects: Int = 5
        /// How long the connection may stay idle while waiting for data. Default: 30 s.
        public var idleTimeout: TimeInterval = 30
        /// How long a whole load may take. Default: 120 s.
        public var totalTimeout: TimeInterval = 120
        /// How many connections the session opens to one host. Default: 6.
        public var maximumConnectionsPerHost: Int = 6

        /// Creates a configuration with the defaults above.
        public init() {}
    }

    /// The configuration the loader was created with.
    public let configuration: Configuration
    private let session: URLSession
    private let delegate: SessionDelegate

    /// Creates a loader with its own session.
    ///
    /// - Parameter logger: Where each finished and failed load is logged
    ///   (`debug`). Default: nowhere.
    public init(configuration: Configuration = Configuration(), logger: Logger = .disabled) {
        self.configuration = configuration
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.urlCache = nil
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        sessionConfiguration.timeoutIntervalForRequest = configuration.idleTimeout
        sessionConfiguration.timeoutIntervalForResource = configuration.totalTimeout
        sessionConfiguration.httpMaximumConnectionsPerHost = configuration.maximumConnectionsPerHost
        delegate = SessionDelegate(configuration: configuration, logger: logger)
        session = URLSession(configuration: sessionConfiguration, delegate: delegate, delegateQueue: nil)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// Starts `request` on the session and returns once the response
    /// metadata arrived; the body streams in as the session receives it.
    ///
    /// - Throws: ``DataLoadingError`` for a failure before the response (no
    ///   connection, a timeout, a redirect limit, a `Content-Length` over
    ///   the limit), or with ``DataLoadingError/Code/cancelled`` when the
    ///   calling task is cancelled.
    public func load(_ request: URLRequest) async throws -> DataLoadingResponse {
        let task = session.dataTask(with: request)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { head in
                delegate.start(task, url: request.url, head: head)
            }
        } onCancel: {
            task.cancel()
        }
    }
}

/// The one bridge from the session's callbacks to `async`: routes each
/// task's callbacks to its caller and its body stream, and enforces the limits.
private final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private struct Entry {
        var url: URL?
        /// The caller of `load` and the body it gets, until the response arrives.
        var head: (continuation: CheckedContinuation<DataLoadingResponse, any Error>, body: AsyncThrowingStream<Data, any Error>)?
        var chunks: AsyncThrowingStream<Data, any Error>.Continuation
        var received = 0
        var visited: Set<URL>
        var timer: DispatchWorkItem?
        /// A redirect refused (a loop, too many): the session delivers the
        /// redirect itself as the response, and the load fails then.
        var refusedRedirect: (code: DataLoadingError.Code, message: String)?

        /// Ends the load: the caller of `load`, or else the body's reader,
        /// gets `error`; without one, the body ends.
        func end(throwing error: (any Error)?) {
            if let head {
                if let error {
                    head.continuation.resume(throwing: error)
                } else {
                    head.continuation.resume(returning: DataLoadingResponse(response: nil, body: head.body))
                }
            }
            chunks.finish(throwing: error)
        }
    }

    private let configuration: URLSessionDataLoader.Configuration
    private let logger: Logger
    private let entries = Locked<[Int: Entry]>([:])

    init(configuration: URLSessionDataLoader.Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Registers `task` and resumes it, unless the calling Swift task is
    /// already cancelled; `head` hears of the response or the failure.
    func start(_ task: URLSessionDataTask, url: URL?, head: CheckedContinuation<DataLoadingResponse, any Error>) {
        let (body, chunks) = AsyncThrowingStream.makeStream(of: Data.self)
        // A reader that stops early (cancelled, or gone) stops the task.
        chunks.onTermination = { termination in
            if case .cancelled = termination { task.cancel() }
        }
        // FoundationNetworking on Linux does not enforce the resource
        // timeout on a body that keeps trickling in; this does.
        // The timer is cancelled when the task ends, so it holds nothing for long.
        let limit = configuration.totalTimeout
        let timer = DispatchWorkItem { [weak self, weak task] in
            guard let self, let task else { return }
            fail(task, code: .timedOut, message: "the load took longer than \(limit) s")
        }
        entries.withLock {
            $0[task.taskIdentifier] = Entry(url: url, head: (head, body), chunks: chunks, visited: url.map { [$0] } ?? [], timer: timer)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + limit, execute: timer)
        // A cancel that came before the entry existed found nothing to stop.
        if Task.isCancelled {
            fail(task, code: .cancelled, message: "the load was cancelled")
        } else {
            task.resume()
        }
    }

    /// Removes the entry of `task`, stopping its timer.
    private func removeEntry(for task: URLSessionTask) -> Entry? {
        let entry = entries.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        entry?.timer?.cancel()
        return entry
    }

    /// Ends the task with `error`: nothing more is heard from the session.
    private func fail(_ task: URLSessionTask, code: DataLoadingError.Code, message: String) {
        guard let entry = removeEntry(for: task) else { return }
        task.cancel()
        logger.debug("load failed", metadata: ["url": "\(entry.url?.absoluteString ?? "")", "error": "\(message)"])
        entry.end(throwing: DataLoadingError(code, url: entry.url, message: message))
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let limit = configuration.maximumResponseSize
        if response.expectedContentLength > limit {
            completionHandler(.cancel)
            fail(dataTask, code: .responseTooLarge,
                 message: "Content-Length is \(response.expectedContentLength) bytes; the limit is \(limit)")
            return
        }
        if let refused = entries.withLock({ $0[dataTask.taskIdentifier]?.refusedRedirect }) {
            completionHandler(.cancel)
            fail(dataTask, code: refused.code, message: refused.message)
            return
        }
        let head = entries.withLock { entries in
            defer { entries[dataTask.taskIdentifier]?.head = nil }
            return entries[dataTask.taskIdentifier]?.head
        }
        if let head { head.continuation.resume(returning: DataLoadingResponse(response: response, body: head.body)) }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let limit = configuration.maximumResponseSize
        let (chunks, tooLarge) = entries.withLock { entries -> (AsyncThrowingStream<Data, any Error>.Continuation?, Bool) in
            guard var entry = entries[dataTask.taskIdentifier] else { return (nil, false) }
            entry.received += data.count
            entries[dataTask.taskIdentifier] = entry
            return (entry.chunks, entry.received > limit)
        }
        if tooLarge {
            fail(dataTask, code: .responseTooLarge, message: "the body grew past the limit of \(limit) bytes")
        } else {
            chunks?.yield(data)
        }
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        guard configuration.followsRedirects else {
            completionHandler(nil)
            return
        }
        // FoundationNetworking stops the process when this answer reaches a
        // task cancelled meanwhile ("Received callback for HTTP redirection,
        // but we're not waiting for it"): a cancelled task is not answered
        // (its cancellation ends it), and a refused redirect does not
        // cancel the task here but when the session delivers the redirect
        // as the response (`refusedRedirect`).
        guard task.state == .running else { return }
        enum Verdict { case follow, refused, unknown }
        let target = request.url
        let maximum = configuration.maximumRedirects
        let verdict = entries.withLock { entries -> Verdict in
            guard var entry = entries[task.taskIdentifier] else { return .unknown }
            if let target, entry.visited.contains(target) {
                entry.refusedRedirect = (.redirectLoop, "the redirect to \(target.absoluteString) leads back to a URL already visited")
            } else if entry.visited.count > maximum {
                entry.refusedRedirect = (.tooManyRedirects, "more than \(maximum) redirects")
            } else if let target {
                entry.visited.insert(target)
            }
            entries[task.taskIdentifier] = entry
            return entry.refusedRedirect == nil ? .follow : .refused
        }
        switch verdict {
        case .follow:
            completionHandler(request)
        case .unknown, .refused:
            completionHandler(nil)
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let entry = removeEntry(for: task) else { return }
        guard let error else {
            logger.debug("loaded", metadata: ["url": "\(entry.url?.absoluteString ?? "")", "bytes": "\(entry.received)"])
            entry.end(throwing: nil)
            return
        }
        var code = Self.code(for: error)
        var message = Self.message(for: error, code: code, url: entry.url)
        if code == .transport && entry.head == nil {
            // curl's "transfer closed with N bytes remaining" and the like.
            code = .connectionLost
            message = "the connection closed after \(entry.received) bytes of the body: \(message)"
        }
        logger.debug("load failed", metadata: ["url": "\(entry.url?.absoluteString ?? "")", "error": "\(message)"])
        entry.end(throwing: DataLoadingError(code, url: entry.url, message: message, underlying: error))
    }

    /// A short message for a session error: the system's words for most,
    /// plainer ones where curl's would leak through.
    private static func message(for error: any Error, code: DataLoadingError.Code, url: URL?) -> String {
        switch (error as? URLError)?.code {
        case .cancelled?: return "the load was cancelled"
        case .cannotConnectToHost?: return "cannot connect: connection refused or host unreachable"
        case .cannotFindHost?, .dnsLookupFailed?: return "cannot connect: host not found: \(url?.host ?? "?")"
        case .notConnectedToInternet?: return "cannot connect: no network"
        default: return error.localizedDescription
        }
    }

    /// The loader's code for a session error.
    private static func code(for error: any Error) -> DataLoadingError.Code {
        guard let urlError = error as? URLError else { return .transport }
        switch urlError.code {
        case .cancelled: return .cancelled
        case .timedOut: return .timedOut
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet: return .cannotConnect
        case .networkConnectionLost: return .connectionLost
        case .httpTooManyRedirects: return .tooManyRedirects
        default: return .transport
        }
    }
}
