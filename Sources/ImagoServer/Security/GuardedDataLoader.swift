#if Server
import Foundation
import Imago
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A loader that lets a request reach only the sources a ``SourcePolicy``
/// allows, checking every hop: the image server's defence against
/// server-side request forgery.
///
/// For each URL, the first and every redirect target, it checks the scheme
/// and host, resolves the host, and refuses the load when any address it
/// resolves to is in a non-public range (unless the policy allows private
/// networks). It follows redirects itself, so the `transport` must not:
/// configure it with redirects off. For `http`, the connection is pinned
/// to the checked address (the URL names the address, `Host` the name), so
/// a name that resolves differently a moment later cannot slip through. For
/// `https` the transport resolves the name again to connect: a window for
/// DNS rebinding that only a transport with a connect hook could close.
///
/// A refused load fails with ``ImageServerError`` (``ImageServerError/Code/forbiddenSource``).
public struct GuardedDataLoader: DataLoading {
    /// What loads each checked hop; must not follow redirects.
    public let transport: any DataLoading
    /// Which sources are allowed.
    public let policy: SourcePolicy
    /// How host names become addresses.
    public let resolver: any HostResolving
    /// How many redirects one load may follow.
    public let maximumRedirects: Int

    /// Creates a guarded loader.
    public init(transport: any DataLoading, policy: SourcePolicy, resolver: any HostResolving = SystemHostResolver(), maximumRedirects: Int = 5) {
        self.transport = transport
        self.policy = policy
        self.resolver = resolver
        self.maximumRedirects = maximumRedirects
    }

    public func dataTask(with request: URLRequest, eventHandler: @escaping @Sendable (DataLoadingEvent) -> Void) -> any DataLoadingTask {
        GuardedLoadingTask(request: request, loader: self, eventHandler: eventHandler)
    }
}

/// One guarded load: a chain of checked hops, at most one in flight.
private final class GuardedLoadingTask: DataLoadingTask {
    private let request: URLRequest
    private let loader: GuardedDataLoader
    private let eventHandler: @Sendable (DataLoadingEvent) -> Void
    private struct State {
        var started = false
        var cancelled = false
        var finished = false
        /// Bumped for every hop; events of an earlier hop are dropped.
        var hop = 0
        var visited: Set<String> = []
        var current: (any DataLoadingTask)?
    }
    private let state = Locked(State())

    init(request: URLRequest, loader: GuardedDataLoader, eventHandler: @escaping @Sendable (DataLoadingEvent) -> Void) {
        self.request = request
        self.loader = loader
        self.eventHandler = eventHandler
    }

    func resume() {
        let first = state.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started && !state.cancelled
        }
        guard first else { return }
        start(request, hop: 0)
    }

    func cancel() {
        let (current, reportHere) = state.withLock { state -> ((any DataLoadingTask)?, Bool) in
            guard !state.finished, !state.cancelled else { return (nil, false) }
            state.cancelled = true
            // With a hop in flight, its cancellation failure is the report.
            if state.current == nil { state.finished = true; return (nil, true) }
            return (state.current, false)
        }
        current?.cancel()
        if reportHere { eventHandler(.failed(DataLoadingError(.cancelled, url: request.url, message: "the load was cancelled"))) }
    }

    /// Checks `hopRequest`'s URL and addresses, then starts it.
    private func start(_ hopRequest: URLRequest, hop: Int) {
        Task {
            do {
                let outgoing = try await self.checked(hopRequest)
                let logicalURL = hopRequest.url!
                let task = self.loader.transport.dataTask(with: outgoing) { [weak self] event in
                    self?.handle(event, hop: hop, url: logicalURL, request: hopRequest)
                }
                let startIt = self.state.withLock { state -> Bool in
                    guard state.hop == hop, !state.finished, !state.cancelled else { return false }
                    state.current = task
                    return true
                }
                if startIt { task.resume() } else { self.finishIfCancelled() }
            } catch {
                self.fail(error, hop: hop)
            }
        }
    }

    /// The request to send: the URL checked against the policy and every
    /// address of its host; for `http`, pinned to the checked address.
    private func checked(_ hopRequest: URLRequest) async throws -> URLRequest {
        guard let url = hopRequest.url else {
            throw ImageServerError(.forbiddenSource, "the source has no URL")
        }
        try loader.policy.check(url)
        guard !loader.policy.allowsPrivateNetworks, let host = url.host else { return hopRequest }
        let addresses: [IPAddress]
        if let literal = IPAddress(host) {
            addresses = [literal]
        } else {
            do {
                addresses = try await loader.resolver.addresses(for: host)
            } catch {
                throw DataLoadingError(.cannotConnect, url: url, message: "cannot connect: \(error)", underlying: error)
            }
        }
        guard let first = addresses.first else {
            throw DataLoadingError(.cannotConnect, url: url, message: "cannot connect: host not found: \(host)")
        }
        // Every address, not only the first: a name that answers with a
        // public and a private address must not get through.
        for address in addresses { try loader.policy.check(address, resolvedFrom: host) }
        guard url.scheme?.lowercased() == "http", IPAddress(host) == nil,
              var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return hopRequest }
        components.host = first.isIPv4 ? first.description : "[\(first)]"
        guard let pinned = components.url else { return hopRequest }
        var outgoing = hopRequest
        outgoing.url = pinned
        outgoing.setValue(url.port.map { "\(host):\($0)" } ?? host, forHTTPHeaderField: "Host")
        return outgoing
    }

    private func handle(_ event: DataLoadingEvent, hop: Int, url: URL, request hopRequest: URLRequest) {
        guard state.withLock({ $0.hop == hop && !$0.finished }) else { return }
        switch event {
        case .response(let response):
            if let http = response as? HTTPURLResponse, [301, 302, 303, 307, 308].contains(http.statusCode),
               let location = http.value(forHTTPHeaderField: "Location") {
                redirect(to: location, from: url, request: hopRequest, hop: hop)
                return
            }
            eventHandler(.response(Self.response(response, as: url)))
        case .data:
            eventHandler(event)
        case .finished, .failed:
            let report = state.withLock { state -> Bool in
                guard state.hop == hop, !state.finished else { return false }
                state.finished = true
                state.current = nil
                return true
            }
            if report { eventHandler(event) }
        }
    }

    private func redirect(to location: String, from url: URL, request hopRequest: URLRequest, hop: Int) {
        guard let target = URL(string: location, relativeTo: url)?.absoluteURL else {
            fail(DataLoadingError(.transport, url: url, message: "the redirect's Location is not a URL: \(location)"), hop: hop)
            return
        }
        enum Next { case follow(any DataLoadingTask), tooMany, loop, stale }
        let next = state.withLock { state -> Next in
            guard state.hop == hop, !state.finished, !state.cancelled, let current = state.current else { return .stale }
            if state.visited.isEmpty { state.visited.insert(request.url?.absoluteString ?? "") }
            guard hop < loader.maximumRedirects else { return .tooMany }
            guard state.visited.insert(target.absoluteString).inserted else { return .loop }
            state.hop = hop + 1
            state.current = nil
            return .follow(current)
        }
        switch next {
        case .stale:
            return
        case .tooMany:
            fail(DataLoadingError(.tooManyRedirects, url: target, message: "more than \(loader.maximumRedirects) redirects"), hop: hop)
        case .loop:
            fail(DataLoadingError(.redirectLoop, url: target, message: "a redirect leads back to a URL already visited"), hop: hop)
        case .follow(let previous):
            previous.cancel()
            var nextRequest = hopRequest
            nextRequest.url = target
            nextRequest.setValue(nil, forHTTPHeaderField: "Host")
            start(nextRequest, hop: hop + 1)
        }
    }

    private func fail(_ error: any Error, hop: Int) {
        let (report, current) = state.withLock { state -> (Bool, (any DataLoadingTask)?) in
            guard state.hop == hop, !state.finished else { return (false, nil) }
            state.finished = true
            defer { state.current = nil }
            return (true, state.current)
        }
        current?.cancel()
        if report { eventHandler(.failed(error)) }
    }

    /// Reports the cancellation when a hop was refused a start by `cancel()`.
    private func finishIfCancelled() {
        let report = state.withLock { state -> Bool in
            guard state.cancelled, !state.finished else { return false }
            state.finished = true
            return true
        }
        if report { eventHandler(.failed(DataLoadingError(.cancelled, url: request.url, message: "the load was cancelled"))) }
    }

    /// The transport's response, under the URL the caller asked for rather than a pinned address.
    private static func response(_ response: URLResponse, as url: URL) -> URLResponse {
        guard let http = response as? HTTPURLResponse, http.url != url else { return response }
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name] = value }
        }
        return HTTPURLResponse(url: url, statusCode: http.statusCode, httpVersion: nil, headerFields: fields) ?? response
    }
}
#endif
