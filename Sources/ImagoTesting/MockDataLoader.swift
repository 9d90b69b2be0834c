import Foundation
import Imago
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A ``DataLoading`` scripted per URL, for tests with no network or disk.
///
/// Each instance has its own script and records; there is no global state,
/// so tests using separate instances run in parallel.
///
/// ```swift
/// let loader = MockDataLoader()
/// loader.stub(url, .image(TestImages.pngData))
/// let client = NetworkClient(loader: loader, imageDecoder: decoder)
/// _ = try await client.image(for: URLRequest(url: url))
/// #expect(loader.requests.map(\.url) == [url])
/// ```
///
/// A held response waits until the test releases it, step by step or at once:
///
/// ```swift
/// loader.stub(url, MockResponse.image(pngBytes).held())
/// let call = Task { try await client.image(for: URLRequest(url: url)) }
/// let load = await loader.waitForTask(for: url)
/// call.cancel()                          // or load.complete()
/// #expect(load.isCancelled)
/// ```
///
/// A URL with no stub fails with ``MockDataLoader/Unstubbed``.
public final class MockDataLoader: DataLoading {
    /// The error for a request whose URL has no stub.
    public struct Unstubbed: Error, Sendable, CustomStringConvertible {
        /// The URL that had no stub.
        public let url: URL?
        public var description: String { "MockDataLoader has no response for \(url?.absoluteString ?? "<no URL>")" }
    }

    private struct State {
        /// Per URL, the responses in turn and how many were used; the last repeats.
        var stubs: [URL: (responses: [MockResponse], used: Int)] = [:]
        var tasks: [MockDataTask] = []
        var waiters: [(url: URL?, continuation: CheckedContinuation<MockDataTask, Never>)] = []
    }

    private let state = Locked(State())

    /// Creates a loader with no stubs.
    public init() {}

    /// Sets the response for `url`, replacing any earlier one.
    public func stub(_ url: URL, _ response: MockResponse) {
        stub(url, sequence: [response])
    }

    /// Sets the responses for successive requests of `url`, replacing any
    /// earlier ones: the first request gets the first, and so on; the last
    /// one answers every request after that. For retry tests:
    ///
    /// ```swift
    /// loader.stub(url, sequence: [.status(503), .image(pngBytes)])
    /// ```
    public func stub(_ url: URL, sequence responses: [MockResponse]) {
        precondition(!responses.isEmpty, "a stub needs at least one response")
        state.withLock { $0.stubs[url] = (responses, 0) }
    }

    /// Sets the response for the URL written as `string`.
    public func stub(_ string: String, _ response: MockResponse) {
        stub(URL(string: string)!, response)
    }

    /// Every request, in the order the loads started.
    public var requests: [URLRequest] { state.withLock { $0.tasks.map(\.request) } }
    /// Every load, in the order they started.
    public var tasks: [MockDataTask] { state.withLock { $0.tasks } }
    /// The requests of the loads that were cancelled, in the order the loads started.
    public var cancelledRequests: [URLRequest] { tasks.filter(\.isCancelled).map(\.request) }

    /// The loads of `url`, in order.
    public func tasks(for url: URL) -> [MockDataTask] {
        state.withLock { $0.tasks.filter { $0.request.url == url } }
    }

    /// Waits until a load of `url` started (of any URL when `nil`) and
    /// returns the first one: handy with held responses, when the code under
    /// test starts the load on another task.
    public func waitForTask(for url: URL? = nil) async -> MockDataTask {
        await withCheckedContinuation { continuation in
            let existing = state.withLock { state -> MockDataTask? in
                if let task = state.tasks.first(where: { url == nil || $0.request.url == url }) { return task }
                state.waiters.append((url, continuation))
                return nil
            }
            if let existing { continuation.resume(returning: existing) }
        }
    }

    /// Records the load and answers it with the next scripted response for
    /// its URL (``Unstubbed`` when there is none).
    public func load(_ request: URLRequest) async throws -> DataLoadingResponse {
        let (task, ready) = state.withLock { state in
            var response = MockResponse.failure(Unstubbed(url: request.url))
            if let url = request.url, let stub = state.stubs[url] {
                state.stubs[url]?.used += 1
                response = stub.responses[min(stub.used, stub.responses.count - 1)]
            }
            let task = MockDataTask(request: request, response: response)
            state.tasks.append(task)
            let matching = state.waiters.filter { $0.url == nil || $0.url == request.url }
            state.waiters.removeAll { $0.url == nil || $0.url == request.url }
            return (task, matching.map(\.continuation))
        }
        ready.forEach { $0.resume(returning: task) }
        return try await task.load()
    }
}
