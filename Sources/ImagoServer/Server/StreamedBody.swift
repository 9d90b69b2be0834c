#if Server
import Foundation
import Imago

/// A body sent as it arrives (a `raw` path's source): the first chunk,
/// read before the status was chosen, then the rest of the source's stream.
struct StreamedBody: Sendable {
    /// The chunks after ``ImageServerReply/body``; ends when the source
    /// does, or throws the failure that cut it short (the connection is
    /// then closed, and the client sees a truncated body).
    let rest: AsyncThrowingStream<Data, any Error>
    /// The place the stream holds among the server's downloads; given back
    /// when the body is dropped, sent or not.
    let lease: StreamLease
}

/// One of a limited number of places, given back when the last reference goes.
final class StreamLease: Sendable {
    private let count: Locked<Int>

    /// Takes a place among `limit` counted by `count`, or returns `nil` when all are taken.
    init?(count: Locked<Int>, limit: Int) {
        guard count.withLock({ value in
            guard value < limit else { return false }
            value += 1
            return true
        }) else { return nil }
        self.count = count
    }

    deinit { count.withLock { $0 -= 1 } }
}
#endif
