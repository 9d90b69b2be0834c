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

    public func dataTask(
        with request: URLRequest,
        eventHandler: @escaping @Sendable (DataLoadingEvent) -> Void
    ) -> any DataLoadingTask {
        let task = session.dataTask(with: request)
        delegate.register(task, url: request.url, eventHandler: eventHandler)
        return URLSessionLoadingTask(task: task)
    }
}

/// Wraps a `URLSessionDataTask`.
///
/// `@unchecked Sendable`: `URLSessionTask` is thread-safe, but
/// FoundationNetworking does not declare it `Sendable`.
private final class URLSessionLoadingTask: DataLoadingTask, @unchecked Sendable {
    private let task: URLSessionDataTask
    init(task: URLSessionDataTask) { self.task = task }
    func resume() { task.resume() }
    func cancel() { task.cancel() }
}

/// Routes the session's callbacks to each task's event handler and enforces the limits.
private final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private struct Entry {
        var url: URL?
        var eventHandler: @Sendable (DataLoadingEvent) -> Void
        var received = 0
        var hasResponse = false
        var visited: Set<URL>
        var timer: DispatchWorkItem?

        init(url: URL?, eventHandler: @escaping @Sendable (DataLoadingEvent) -> Void) {
            self.url = url
            self.eventHandler = eventHandler
            self.visited = url.map { [$0] } ?? []
        }
    }

    private let configuration: URLSessionDataLoader.Configuration
    private let logger: Logger
    private let entries = Locked<[Int: Entry]>([:])

    init(configuration: URLSessionDataLoader.Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    func register(_ task: URLSessionTask, url: URL?, eventHandler: @escaping @Sendable (DataLoadingEvent) -> Void) {
        entries.withLock { $0[task.taskIdentifier] = Entry(url: url, eventHandler: eventHandler) }
        // FoundationNetworking on Linux does not enforce the resource
        // timeout on a body that keeps trickling in; this does.
        // The timer is cancelled when the task ends, so it holds nothing for long.
        let limit = configuration.totalTimeout
        let timer = DispatchWorkItem { [weak self, weak task] in
            guard let self, let task else { return }
            fail(task, code: .timedOut, message: "the load took longer than \(limit) s")
        }
        entries.withLock { $0[task.taskIdentifier]?.timer = timer }
        DispatchQueue.global().asyncAfter(deadline: .now() + limit, execute: timer)
    }

    /// Removes the entry of `task`, stopping its timer.
    private func removeEntry(for task: URLSessionTask) -> Entry? {
        let entry = entries.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        entry?.timer?.cancel()
        return entry
    }

    /// Ends the task with `error`: the handler hears nothing more from the session.
    private func fail(_ task: URLSessionTask, code: DataLoadingError.Code, message: String) {
        guard let entry = removeEntry(for: task) else { return }
        task.cancel()
        logger.debug("load failed", metadata: ["url": "\(entry.url?.absoluteString ?? "")", "error": "\(message)"])
        entry.eventHandler(.failed(DataLoadingError(code, url: entry.url, message: message)))
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
        let handler = entries.withLock { entries -> (@Sendable (DataLoadingEvent) -> Void)? in
            entries[dataTask.taskIdentifier]?.hasResponse = true
            return entries[dataTask.taskIdentifier]?.eventHandler
        }
        handler?(.response(response))
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let limit = configuration.maximumResponseSize
        let (handler, tooLarge) = entries.withLock { entries -> ((@Sendable (DataLoadingEvent) -> Void)?, Bool) in
            guard var entry = entries[dataTask.taskIdentifier] else { return (nil, false) }
            entry.received += data.count
            entries[dataTask.taskIdentifier] = entry
            return (entry.eventHandler, entry.received > limit)
        }
        if tooLarge {
            fail(dataTask, code: .responseTooLarge, message: "the body grew past the limit of \(limit) bytes")
        } else {
            handler?(.data(data))
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
        enum Verdict { case follow, tooMany, loop, unknown }
        let target = request.url
        let verdict = entries.withLock { entries -> Verdict in
            guard var entry = entries[task.taskIdentifier] else { return .unknown }
            if let target, entry.visited.contains(target) { return .loop }
            if entry.visited.count > configuration.maximumRedirects { return .tooMany }
            if let target { entry.visited.insert(target) }
            entries[task.taskIdentifier] = entry
            return .follow
        }
        switch verdict {
        case .follow:
            completionHandler(request)
        case .unknown:
            completionHandler(nil)
        // Answer the session first (it must hear back exactly once), then
        // end the task: later callbacks find no entry and are dropped.
        case .loop:
            completionHandler(nil)
            fail(task, code: .redirectLoop, message: "the redirect to \(target?.absoluteString ?? "?") leads back to a URL already visited")
        case .tooMany:
            completionHandler(nil)
            fail(task, code: .tooManyRedirects, message: "more than \(configuration.maximumRedirects) redirects")
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let entry = removeEntry(for: task) else { return }
        guard let error else {
            logger.debug("loaded", metadata: ["url": "\(entry.url?.absoluteString ?? "")", "bytes": "\(entry.received)"])
            entry.eventHandler(.finished)
            return
        }
        var code = Self.code(for: error)
        var message = Self.message(for: error, code: code, url: entry.url)
        if code == .transport && entry.hasResponse {
            // curl's "transfer closed with N bytes remaining" and the like.
            code = .connectionLost
            message = "the connection closed after \(entry.received) bytes of the body: \(message)"
        }
        logger.debug("load failed", metadata: ["url": "\(entry.url?.absoluteString ?? "")", "error": "\(message)"])
        entry.eventHandler(.failed(DataLoadingError(code, url: entry.url, message: message, underlying: error)))
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
