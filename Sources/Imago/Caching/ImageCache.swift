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
    private let entries: LRUStore<ImageCacheKey, Image>

    /// Creates a cache.
    ///
    /// - Parameter time: The clock for ``Configuration/timeToLive``.
    public init(configuration: Configuration = Configuration(), time: TimeSource = .system) {
        self.configuration = configuration
        self.time = time
        entries = LRUStore(
            costLimit: configuration.costLimit, countLimit: configuration.countLimit,
            entryCostLimit: configuration.entryCostLimit
        )
    }

    /// The total cost of the images stored.
    public var totalCost: Int { entries.totalCost }
    /// The number of images stored.
    public var count: Int { entries.count }

    public func image(for key: ImageCacheKey) -> Image? {
        entries.value(for: key, now: configuration.timeToLive == nil ? nil : time.now())
    }

    public func store(_ image: Image, for key: ImageCacheKey) {
        let expiry = configuration.timeToLive.map { time.now().addingTimeInterval($0) }
        entries.insert(image, for: key, cost: image.cost, expiry: expiry)
    }

    public func removeImage(for key: ImageCacheKey) {
        entries.removeValue(for: key)
    }

    public func removeAll() {
        entries.removeAll()
    }

    /// Evicts least-recently-used images until the total cost is at most `cost`.
    public func trim(toCost cost: Int) {
        entries.trim(toCost: cost)
    }

    /// Evicts least-recently-used images until at most `count` remain.
    public func trim(toCount count: Int) {
        entries.trim(count: count)
    }
}
