import Foundation

/// Values by key, least recently used first out, within a total cost and a
/// count: the one cost-bounded store of the package, behind the memory
/// cache (``ImageCache``) and the image server's cache of encoded outputs.
///
/// Thread-safe; every operation is O(1) and takes one lock (an eviction is
/// O(1) per entry evicted). Evicted values are released after the lock.
package final class LRUStore<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// The most cost kept.
    package let costLimit: Int
    /// The most entries kept.
    package let countLimit: Int
    /// The largest cost of one entry; larger values are not kept.
    package let entryCostLimit: Int
    private let list = Locked(LRUList<Key, Value>())

    package init(costLimit: Int, countLimit: Int = .max, entryCostLimit: Int? = nil) {
        self.costLimit = max(0, costLimit)
        self.countLimit = max(0, countLimit)
        self.entryCostLimit = entryCostLimit ?? self.costLimit
    }

    /// The total cost of the entries.
    package var totalCost: Int { list.withLock { $0.totalCost } }
    /// The number of entries.
    package var count: Int { list.withLock { $0.count } }

    /// The value for `key`, which becomes the most recently used; `nil` when
    /// absent or expired at `now` (an expired entry is removed).
    package func value(for key: Key, now: Date? = nil) -> Value? {
        list.withLock { list in
            guard let node = list.index[key] else { return nil }
            if let now, let expiry = list.nodes[node].expiry, expiry <= now {
                _ = list.remove(node)
                return nil
            }
            list.moveToFront(node)
            return list.nodes[node].value
        }
    }

    /// Keeps `value` for `key` as the most recently used entry, evicting
    /// the least recently used ones until both limits hold. A value over
    /// ``entryCostLimit`` is not kept, and removes what `key` held.
    package func insert(_ value: Value, for key: Key, cost: Int, expiry: Date? = nil) {
        guard cost <= entryCostLimit, countLimit > 0 else {
            removeValue(for: key)
            return
        }
        let evicted = list.withLock { list in
            list.insert(key: key, value: value, cost: cost, expiry: expiry)
            return list.trim(toCost: costLimit, count: countLimit)
        }
        _ = evicted
    }

    /// Removes the entry for `key`.
    package func removeValue(for key: Key) {
        let removed = list.withLock { list -> Value? in
            guard let node = list.index[key] else { return nil }
            return list.remove(node)
        }
        _ = removed
    }

    /// Removes every entry.
    package func removeAll() {
        let old = list.withLock { list in
            defer { list = LRUList() }
            return list
        }
        _ = old
    }

    /// Evicts least recently used entries until the total cost is at most
    /// `cost` and at most `count` entries remain.
    package func trim(toCost cost: Int = .max, count: Int = .max) {
        let evicted = list.withLock { $0.trim(toCost: cost, count: count) }
        _ = evicted
    }
}

/// A doubly linked list of entries in an array, most recent first, with an
/// index from key to node. Freed nodes are reused.
struct LRUList<Key: Hashable, Value> {
    struct Node {
        var key: Key
        var value: Value?
        var cost: Int
        var expiry: Date?
        var previous: Int
        var next: Int
    }

    var nodes: [Node] = []
    var index: [Key: Int] = [:]
    private var free: [Int] = []
    private var head = -1
    private var tail = -1
    private(set) var totalCost = 0

    var count: Int { index.count }

    mutating func insert(key: Key, value: Value, cost: Int, expiry: Date?) {
        if let existing = index[key] { remove(existing) }
        let node = Node(key: key, value: value, cost: cost, expiry: expiry, previous: -1, next: head)
        let position: Int
        if let reused = free.popLast() {
            nodes[reused] = node
            position = reused
        } else {
            nodes.append(node)
            position = nodes.count - 1
        }
        if head >= 0 { nodes[head].previous = position }
        head = position
        if tail < 0 { tail = position }
        index[key] = position
        totalCost += cost
    }

    mutating func moveToFront(_ node: Int) {
        guard node != head else { return }
        unlink(node)
        nodes[node].previous = -1
        nodes[node].next = head
        if head >= 0 { nodes[head].previous = node }
        head = node
        if tail < 0 { tail = node }
    }

    @discardableResult
    mutating func remove(_ node: Int) -> Value? {
        unlink(node)
        index[nodes[node].key] = nil
        totalCost -= nodes[node].cost
        let value = nodes[node].value
        nodes[node].value = nil
        free.append(node)
        return value
    }

    /// Removes from the least recent end until both limits hold; returns the removed values.
    mutating func trim(toCost cost: Int, count limit: Int) -> [Value] {
        var removed: [Value] = []
        while tail >= 0 && (totalCost > cost || count > limit) {
            if let value = remove(tail) { removed.append(value) }
        }
        return removed
    }

    private mutating func unlink(_ node: Int) {
        let (previous, next) = (nodes[node].previous, nodes[node].next)
        if previous >= 0 { nodes[previous].next = next } else { head = next }
        if next >= 0 { nodes[next].previous = previous } else { tail = previous }
    }
}
