#if Server
import Foundation
import Imago

/// Encoded outputs kept in memory, least recently used first out, within a
/// byte budget; answers repeated requests (and their `If-None-Match`)
/// without touching the pipeline.
final class OutputCache: Sendable {
    private struct Entry {
        var output: RenderedImage
        var lastUse: UInt64
    }
    private struct State {
        var entries: [String: Entry] = [:]
        var bytes = 0
        var clock: UInt64 = 0
    }
    private let capacity: Int
    private let state = Locked(State())

    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// The output for `key`, if kept.
    func output(for key: String) -> RenderedImage? {
        state.withLock { state in
            guard var entry = state.entries[key] else { return nil }
            state.clock += 1
            entry.lastUse = state.clock
            state.entries[key] = entry
            return entry.output
        }
    }

    /// Keeps `output`; outputs larger than a quarter of the budget are not kept.
    func keep(_ output: RenderedImage, for key: String) {
        let size = output.data.count + key.utf8.count
        guard size <= capacity / 4 else { return }
        state.withLock { state in
            state.clock += 1
            if let old = state.entries.updateValue(Entry(output: output, lastUse: state.clock), forKey: key) {
                state.bytes -= old.output.data.count + key.utf8.count
            }
            state.bytes += size
            guard state.bytes > capacity else { return }
            // Trim to 90% at once, so trimming is rare.
            let target = capacity * 9 / 10
            for (oldKey, entry) in state.entries.sorted(by: { $0.value.lastUse < $1.value.lastUse }) {
                guard state.bytes > target else { break }
                state.entries[oldKey] = nil
                state.bytes -= entry.output.data.count + oldKey.utf8.count
            }
        }
    }

    /// The bytes kept.
    var byteCount: Int { state.withLock { $0.bytes } }
}
#endif
