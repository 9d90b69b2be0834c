import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Loads `http` and `https` URLs with `URLSession` (FoundationNetworking on Linux).
///
/// The loader owns one ephemeral session (no `URLCache`: Imago caches on its
/// own terms) and enforces ``Configuration/maximumResponseSize`` both from
/// `Content-Length` and while the body streams in. Redirects are followed up
/// to ``Configuration/maximumRedirects``; past that, or when following is
/// off, the 3xx response itself is reported and validation rejects it.
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
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.urlCache = nil
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        sessionConfiguration.timeoutIntervalForRequest = configuration.idleTimeout
        sessionConfiguration.timeoutIntervalForResource = configuration.totalTimeout
        sessionConfiguration.httpMaximumConnectionsPerHost = configuration.maximumConnectionsPerHost
        delegate = SessionDelegate(configuration: configuration)
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
        var redirects = 0
    }

    private let configuration: URLSessionDataLoader.Configuration
    private let entries = Locked<[Int: Entry]>([:])

    init(configuration: URLSessionDataLoader.Configuration) {
        self.configuration = configuration
    }

    func register(_ task: URLSessionTask, url: URL?, eventHandler: @escaping @Sendable (DataLoadingEvent) -> Void) {
        entries.withLock { $0[task.taskIdentifier] = Entry(url: url, eventHandler: eventHandler) }
    }

    private func handler(for task: URLSessionTask) -> (@Sendable (DataLoadingEvent) -> Void)? {
        entries.withLock { $0[task.taskIdentifier]?.eventHandler }
    }

    /// Ends the task with `error`: the handler hears nothing more from the session.
    private func fail(_ task: URLSessionTask, code: DataLoadingError.Code, message: String) {
        guard let entry = entries.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        task.cancel()
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
        handler(for: dataTask)?(.response(response))
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
        let follows = configuration.followsRedirects && entries.withLock { entries -> Bool in
            guard var entry = entries[task.taskIdentifier], entry.redirects < configuration.maximumRedirects else {
                return false
            }
            entry.redirects += 1
            entries[task.taskIdentifier] = entry
            return true
        }
        completionHandler(follows ? request : nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let entry = entries.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        guard let error else {
            entry.eventHandler(.finished)
            return
        }
        if let urlError = error as? URLError, urlError.code == .cancelled {
            entry.eventHandler(.failed(DataLoadingError(.cancelled, url: entry.url, message: "the load was cancelled", underlying: error)))
        } else {
            entry.eventHandler(.failed(DataLoadingError(.transport, url: entry.url, message: error.localizedDescription, underlying: error)))
        }
    }
}
