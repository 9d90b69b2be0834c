import Foundation
import Imago

/// A ``DataCaching`` in memory, for tests with no disk; records reads and writes.
public final class InMemoryDataCache: DataCaching {
    private struct State {
        var entries: [String: DataCacheEntry] = [:]
        var reads: [String] = []
        var writes: [String] = []
    }

    private let state = Locked(State())

    /// Creates an empty cache.
    public init() {}

    /// Every key looked up, in order.
    public var reads: [String] { state.withLock { $0.reads } }
    /// Every key stored, in order.
    public var writes: [String] { state.withLock { $0.writes } }
    /// The keys currently stored.
    public var keys: Set<String> { state.withLock { Set($0.entries.keys) } }

    public func entry(for key: String) -> DataCacheEntry? {
        state.withLock { state in
            state.reads.append(key)
            return state.entries[key]
        }
    }

    public func store(_ entry: DataCacheEntry, for key: String) {
        state.withLock { state in
            state.writes.append(key)
            state.entries[key] = entry
        }
    }

    public func removeEntry(for key: String) {
        state.withLock { _ = $0.entries.removeValue(forKey: key) }
    }

    public func removeAll() {
        state.withLock { $0.entries.removeAll() }
    }
}
