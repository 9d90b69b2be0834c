#if Server
import Foundation
import Imago

/// Download slots per origin host, so that one slow or hostile host cannot
/// hold every connection: at most ``perHost`` downloads from a host run at
/// once; the others wait, each for at most ``maximumWait`` seconds, and a
/// download that cannot start in time fails as a timed-out source (504, as
/// imgproxy answers a download timeout). Other hosts' downloads never wait
/// for it. (The same type, keyed by one name for all, is the total limit
/// taken after a host's slot.)
///
/// A slot is held from the request until its body has been read (or
/// dropped), since a slow host is slow in its body too.
final class HostSlots: Sendable {
    /// Downloads from one host at once (and waiting beyond them).
    let perHost: Int
    /// The most seconds a download waits for a slot of its host.
    let maximumWait: Double

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct Host {
        var running = 0
        var waiting: [Waiter] = []
    }

    private struct State {
        var hosts: [String: Host] = [:]
        var nextID: UInt64 = 0
        /// Waiters that timed out or were cancelled before they were in line.
        var gone: [UInt64: any Error] = [:]
    }

    private let state = Locked(State())

    init(perHost: Int, maximumWait: Double) {
        self.perHost = max(1, perHost)
        self.maximumWait = maximumWait
    }

    /// Downloads running from `host` now.
    func running(for host: String) -> Int { state.withLock { $0.hosts[host]?.running ?? 0 } }

    /// Takes a slot of `host`, waiting as the type says.
    ///
    /// - Throws: ``DataLoadingError/Code/timedOut`` when no slot came in
    ///   time; `CancellationError` when the
    ///   caller is cancelled while waiting.
    func acquire(for host: String, url: URL?) async throws {
        enum Admission { case admitted, wait(UInt64) }
        let admission: Admission = state.withLock { state in
            var entry = state.hosts[host, default: Host()]
            defer { state.hosts[host] = entry }
            if entry.running < perHost {
                entry.running += 1
                return .admitted
            }
            state.nextID += 1
            return .wait(state.nextID)
        }
        switch admission {
        case .admitted:
            return
        case .wait(let id):
            let seconds = maximumWait
            let perHost = self.perHost
            let timer = Task { [self] in
                try? await Task.sleep(for: .seconds(seconds))
                guard !Task.isCancelled else { return }
                leave(id, host: host, with: DataLoadingError(.timedOut, url: url,
                                                             message: "no download slot for \(host) within \(seconds) s (\(perHost) running)"))
            }
            defer { timer.cancel() }
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    let outcome = state.withLock { state -> Result<Bool, any Error> in
                        if let error = state.gone.removeValue(forKey: id) { return .failure(error) }
                        var entry = state.hosts[host, default: Host()]
                        defer { state.hosts[host] = entry }
                        if entry.running < perHost {   // a slot freed while this one got ready to wait
                            entry.running += 1
                            return .success(false)
                        }
                        entry.waiting.append(Waiter(id: id, continuation: continuation))
                        return .success(true)
                    }
                    switch outcome {
                    case .success(true): break
                    case .success(false): continuation.resume()
                    case .failure(let error): continuation.resume(throwing: error)
                    }
                }
            } onCancel: {
                leave(id, host: host, with: CancellationError())
            }
        }
    }

    /// Gives a slot of `host` back: to the first waiter, or to the pool.
    func release(for host: String) {
        let next: Waiter? = state.withLock { state in
            guard var entry = state.hosts[host] else { return nil }
            defer { state.hosts[host] = entry.running == 0 && entry.waiting.isEmpty ? nil : entry }
            if !entry.waiting.isEmpty { return entry.waiting.removeFirst() }   // the slot passes to it
            entry.running = max(0, entry.running - 1)
            return nil
        }
        next?.continuation.resume()
    }

    /// Removes waiter `id`, if still waiting, and fails it with `error`.
    private func leave(_ id: UInt64, host: String, with error: any Error) {
        let waiter: Waiter? = state.withLock { state in
            guard var entry = state.hosts[host], let index = entry.waiting.firstIndex(where: { $0.id == id }) else {
                // Not in line yet (or served already: then the mark is never read and is dropped below).
                state.gone[id] = error
                if state.gone.count > 4096 { state.gone.removeAll() }
                return nil
            }
            let waiter = entry.waiting.remove(at: index)
            state.hosts[host] = entry
            return waiter
        }
        waiter?.continuation.resume(throwing: error)
    }

    /// `loaded` with its body holding slots until the body ends, fails or
    /// is dropped, then calling `release` once. The body is read as it is
    /// consumed, as before (no buffering ahead of the consumer).
    static func holding(_ loaded: DataLoadingResponse, release: @escaping @Sendable () -> Void) -> DataLoadingResponse {
        let reader = SlotHoldingReader(body: loaded.body, release: release)
        let body = AsyncThrowingStream<Data, any Error> { try await reader.next() }
        return DataLoadingResponse(response: loaded.response, body: body)
    }
}

/// Reads a body for ``HostSlots/holdingSlot(for:_:)`` and gives the slot
/// back when the body ends, fails, or the reader is let go of.
private final class SlotHoldingReader: @unchecked Sendable {
    // @unchecked: the iterator is used by the one consumer of the stream,
    // one `next()` at a time, as an AsyncSequence's iterator always is.
    private var iterator: AsyncThrowingStream<Data, any Error>.AsyncIterator
    private let release: @Sendable () -> Void
    private let released = Locked(false)

    init(body: AsyncThrowingStream<Data, any Error>, release: @escaping @Sendable () -> Void) {
        self.iterator = body.makeAsyncIterator()
        self.release = release
    }

    func next() async throws -> Data? {
        do {
            guard let chunk = try await iterator.next() else {
                releaseOnce()
                return nil
            }
            return chunk
        } catch {
            releaseOnce()
            throw error
        }
    }

    private func releaseOnce() {
        if released.withLock({ flag in defer { flag = true }; return !flag }) { release() }
    }

    deinit { releaseOnce() }
}
#endif
