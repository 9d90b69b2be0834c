import Foundation

/// The default ``ImageCaching``: least-recently-used eviction by cost (the
/// bytes of the bitmap, ``Image/cost``), with a count limit and an optional
/// time to live.
///
/// ```swift
/// let cache = ImageCache(configuration: .init(costLimit: 64 << 20, countLimit: 500))
/// cache.store(image, for: ImageCacheKey("my-own-image"))   // or pipeline.cacheKey(for: request)
/// ```
///
/// Every operation is O(1) and takes one lock. An image costing more than
/// ``Configuration/entryCostLimit`` is not stored, so one huge image cannot
/// flush the cache.
public final class ImageCache: ImageCaching {
    /// The limits of the cache.
    public struct Configuration: Sendable, Hashable {
        /// The most bytes of bitmaps kept. Default: a fraction of physical
        /// memory (see ``defaultCostLimit``).
        public var costLimit: Int
        /// The most images kept. Default: 1,000.
        public var countLimit: Int
        /// How long an entry stays valid after it was stored; `nil` for ever.
        public var timeToLive: TimeInterval?
        /// The largest cost of one entry, as a fraction of ``costLimit``. Default: 0.1.
        public var entryCostLimitRatio: Double

        /// Creates limits; the defaults are finite.
        public init(
            costLimit: Int = ImageCache.defaultCostLimit,
            countLimit: Int = 1_000,
            timeToLive: TimeInterval? = nil,
            entryCostLimitRatio: Double = 0.1
        ) {
            self.costLimit = costLimit
            self.countLimit = countLimit
            self.timeToLive = timeToLive
            self.entryCostLimitRatio = entryCostLimitRatio
        }

        /// The largest cost one entry may have.
        public var entryCostLimit: Int { Int(Double(costLimit) * entryCostLimitRatio) }
    }

    /// A quarter of physical memory, at most 512 MB.
    public static var defaultCostLimit: Int {
        Int(min(ProcessInfo.processInfo.physicalMemory / 4, 512 << 20))
    }

    /// The process-wide cache of `ImagePipeline.shared`; pipelines you
    /// configure get their own unless you pass this one.
    public static let shared = ImageCache()

    /// The limits the cache was created with.
    public let configuration: Configuration
    private let time: TimeSource
    private let state = Locked(LRUList())

    /// Creates a cache.
    ///
    /// - Parameter time: The clock for ``Configuration/timeToLive``.
    public init(configuration: Configuration = Configuration(), time: TimeSource = .system) {
        self.configuration = configuration
        self.time = time
    }

    /// The total cost of the images stored.
    public var totalCost: Int { state.withLock { $0.totalCost } }
    /// The number of images stored.
    public var count: Int { state.withLock { $0.count } }

    public func image(for key: ImageCacheKey) -> Image? {
        let now = configuration.timeToLive == nil ? nil : time.now()
        return state.withLock { list in
            guard let node = list.index[key] else { return nil }
            if let now, let expiry = list.nodes[node].expiry, expiry <= now {
                list.remove(node)
                return nil
            }
            list.moveToFront(node)
            return list.nodes[node].image
        }
    }

    public func store(_ image: Image, for key: ImageCacheKey) {
        let cost = image.cost
        guard cost <= configuration.entryCostLimit, configuration.countLimit > 0 else {
            removeImage(for: key)
            return
        }
        let expiry = configuration.timeToLive.map { time.now().addingTimeInterval($0) }
        // The evicted images are released after the lock, outside it.
        let evicted = state.withLock { list in
            list.insert(key: key, image: image, cost: cost, expiry: expiry)
            return list.trim(toCost: configuration.costLimit, count: configuration.countLimit)
        }
        _ = evicted
    }

    public func removeImage(for key: ImageCacheKey) {
        let removed = state.withLock { list -> Image? in
            guard let node = list.index[key] else { return nil }
            return list.remove(node)
        }
        _ = removed
    }

    public func removeAll() {
        let old = state.withLock { list in
            defer { list = LRUList() }
            return list
        }
        _ = old
    }

    /// Evicts least-recently-used images until the total cost is at most `cost`.
    public func trim(toCost cost: Int) {
        let evicted = state.withLock { $0.trim(toCost: cost, count: Int.max) }
        _ = evicted
    }

    /// Evicts least-recently-used images until at most `count` remain.
    public func trim(toCount count: Int) {
        let evicted = state.withLock { $0.trim(toCost: Int.max, count: count) }
        _ = evicted
    }
}

/// A doubly linked list of entries in an array, most recent first, with an
/// index from key to node. Freed nodes are reused.
struct LRUList {
    struct Node {
        var key: ImageCacheKey
        var image: Image?
        var cost: Int
        var expiry: Date?
        var previous: Int
        var next: Int
    }

    var nodes: [Node] = []
    var index: [ImageCacheKey: Int] = [:]
    private var free: [Int] = []
    private var head = -1
    private var tail = -1
    private(set) var totalCost = 0

    var count: Int { index.count }

    mutating func insert(key: ImageCacheKey, image: Image, cost: Int, expiry: Date?) {
        if let existing = index[key] { remove(existing) }
        let node = Node(key: key, image: image, cost: cost, expiry: expiry, previous: -1, next: head)
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
    mutating func remove(_ node: Int) -> Image? {
        unlink(node)
        index[nodes[node].key] = nil
        totalCost -= nodes[node].cost
        let image = nodes[node].image
        nodes[node].image = nil
        free.append(node)
        return image
    }

    /// Removes from the least-recent end until both limits hold; returns the removed images.
    mutating func trim(toCost cost: Int, count limit: Int) -> [Image] {
        var removed: [Image] = []
        while tail >= 0 && (totalCost > cost || count > limit) {
            if let image = remove(tail) { removed.append(image) }
        }
        return removed
    }

    private mutating func unlink(_ node: Int) {
        let (previous, next) = (nodes[node].previous, nodes[node].next)
        if previous >= 0 { nodes[previous].next = next } else { head = next }
        if next >= 0 { nodes[next].previous = previous } else { tail = previous }
    }
}
