#if Server
import Foundation
import Imago

/// Download slots per origin host, then in all, so that one slow or hostile
/// host cannot hold every connection: at most `perHost` downloads from a
/// host run at once; the others wait, each for at most `maximumWait`
/// seconds, and a download that cannot start in time fails as a timed-out
/// source (504, as imgproxy answers a download timeout). A download takes
/// its host's slot before one of the total, so a slow host's waiting
/// downloads hold none, and other hosts' downloads never wait for it.
///
/// A slot is held from the request until its body has been read (or
/// dropped), since a slow host is slow in its body too. Both limits are
/// ``CapacityGates`` of weight 1.
struct DownloadSlots: Sendable {
    /// One gate per host (`nil`: no limit per host).
    let perHost: CapacityGates<String>?
    /// One gate for all (`nil`: no limit in all).
    private(set) var total: CapacityGates<String>?
    /// The most seconds a download waits for each of its slots.
    let maximumWait: Double

    init(perHost: Int?, total: Int?, maximumWait: Double) {
        self.perHost = perHost.map { CapacityGates(capacity: $0) }
        self.total = total.map { CapacityGates(capacity: $0) }
        self.maximumWait = maximumWait
    }

    /// These slots with the same gates per host and none in all: for `raw`
    /// streams, which have a limit of their own, so they never take an
    /// image's download slot.
    var withoutTotal: DownloadSlots {
        var copy = self
        copy.total = nil
        return copy
    }

    /// A slot of `host`, then one of the total (the first given back if the second fails).
    ///
    /// - Throws: ``DataLoadingError/Code/timedOut`` when a slot does not come in time.
    func acquire(for host: String, url: URL?) async throws {
        let wait = maximumWait
        try await perHost?.enter(host, waitingAtMost: wait) {
            DataLoadingError(.timedOut, url: url, message: "no download slot for \(host) within \(wait) s")
        }
        do {
            try await total?.enter("", waitingAtMost: wait) {
                DataLoadingError(.timedOut, url: url, message: "no download slot within \(wait) s: every one is in use")
            }
        } catch {
            perHost?.leave(host)
            throw error
        }
    }

    /// Gives back the slots ``acquire(for:url:)`` took.
    func release(for host: String) {
        total?.leave("")
        perHost?.leave(host)
    }

    /// `loaded` with its body holding `host`'s slots until the body ends,
    /// fails or is dropped, then giving them back once. The body is read as
    /// it is consumed (no buffering ahead of the consumer).
    func holding(_ loaded: DataLoadingResponse, for host: String) -> DataLoadingResponse {
        guard perHost != nil || total != nil else { return loaded }
        let reader = SlotHoldingReader(body: loaded.body) { [self] in release(for: host) }
        let body = AsyncThrowingStream<Data, any Error> { try await reader.next() }
        return DataLoadingResponse(response: loaded.response, body: body)
    }
}

/// Reads a body for ``DownloadSlots/holding(_:for:)`` and gives the slots
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
