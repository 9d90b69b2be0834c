import Foundation
import Imago
import ImagoTesting
import Testing

@Suite struct ImageCacheTests {
    /// A 10x10 RGBA image costs 400 bytes.
    let image = TestImages.solid(width: 10, height: 10)
    let clock = ManualTimeSource()

    private func key(_ name: String) -> ImageCacheKey { ImageCacheKey(name) }

    private func cache(cost: Int = 4_000, count: Int = 100, ttl: TimeInterval? = nil) -> ImageCache {
        ImageCache(configuration: .init(costLimit: cost, countLimit: count, timeToLive: ttl, entryCostLimitRatio: 0.5), time: clock.timeSource)
    }

    @Test func storedImageIsReturned() {
        let cache = cache()
        cache.store(image, for: key("a"))
        #expect(cache.image(for: key("a")) == image)
        #expect(cache.image(for: key("b")) == nil)
        #expect(cache.totalCost == 400 && cache.count == 1)
    }

    @Test func overTheCostLimitTheLeastRecentlyUsedGoesFirst() {
        let cache = cache(cost: 1_200)
        for name in ["a", "b", "c"] { cache.store(image, for: key(name)) }
        _ = cache.image(for: key("a"))          // a is now the most recent
        cache.store(image, for: key("d"))       // over 1,200: b goes
        #expect(cache.image(for: key("b")) == nil)
        #expect(cache.image(for: key("a")) != nil && cache.image(for: key("c")) != nil && cache.image(for: key("d")) != nil)
        #expect(cache.totalCost == 1_200)
    }

    @Test func overTheCountLimitTheLeastRecentlyUsedGoesFirst() {
        let cache = cache(count: 2)
        cache.store(image, for: key("a"))
        cache.store(image, for: key("b"))
        _ = cache.image(for: key("a"))
        cache.store(image, for: key("c"))
        #expect(cache.count == 2)
        #expect(cache.image(for: key("b")) == nil)
        #expect(cache.image(for: key("a")) != nil)
    }

    @Test func anEntryOverItsShareOfTheLimitIsNotCached() {
        let cache = cache(cost: 4_000)         // entries up to 2,000 bytes
        let big = TestImages.solid(width: 30, height: 30)   // 3,600 bytes
        cache.store(image, for: key("small"))
        cache.store(big, for: key("big"))
        #expect(cache.image(for: key("big")) == nil)
        #expect(cache.image(for: key("small")) != nil)
    }

    @Test func tooLargeReplacementRemovesTheOldEntry() {
        let cache = cache(cost: 4_000)
        cache.store(image, for: key("a"))
        cache.store(TestImages.solid(width: 30, height: 30), for: key("a"))
        #expect(cache.image(for: key("a")) == nil)
        #expect(cache.totalCost == 0)
    }

    @Test func entriesExpireAfterTheirTimeToLive() {
        let cache = cache(ttl: 60)
        cache.store(image, for: key("a"))
        clock.advance(by: 59)
        #expect(cache.image(for: key("a")) != nil)
        clock.advance(by: 1)
        #expect(cache.image(for: key("a")) == nil)
        #expect(cache.count == 0)
    }

    @Test func replacingAnEntryKeepsTheCostRight() {
        let cache = cache()
        cache.store(image, for: key("a"))
        cache.store(TestImages.solid(width: 5, height: 5), for: key("a"))
        #expect(cache.totalCost == 100 && cache.count == 1)
    }

    @Test func removeAllAndTrimming() {
        let cache = cache()
        for name in ["a", "b", "c", "d"] { cache.store(image, for: key(name)) }
        cache.trim(toCost: 800)
        #expect(cache.count == 2)
        #expect(cache.image(for: key("d")) != nil && cache.image(for: key("c")) != nil)
        cache.trim(toCount: 1)                  // c was read last: d goes
        #expect(cache.count == 1)
        #expect(cache.image(for: key("d")) == nil)
        cache.removeImage(for: key("c"))
        #expect(cache.count == 0)
        cache.store(image, for: key("e"))
        cache.removeAll()
        #expect(cache.count == 0 && cache.totalCost == 0)
        cache.store(image, for: key("f"))
        #expect(cache.image(for: key("f")) != nil)
    }

    @Test func manyOperationsKeepTheListConsistent() {
        let cache = cache(cost: 2_000, count: 4)
        var model: [String] = []   // most recent last
        for step in 0..<500 {
            let name = "k\((step * 7) % 9)"
            if step % 3 == 0 {
                let hit = cache.image(for: key(name)) != nil
                #expect(hit == model.contains(name))
                if hit { model.removeAll { $0 == name }; model.append(name) }
            } else {
                cache.store(image, for: key(name))
                model.removeAll { $0 == name }
                model.append(name)
                if model.count > 4 { model.removeFirst() }
            }
            #expect(cache.count == model.count)
        }
    }

    @Test func defaultsAreFinite() {
        let configuration = ImageCache.Configuration()
        #expect(configuration.costLimit > 0 && configuration.costLimit <= 512 << 20)
        #expect(configuration.countLimit == 1_000)
        #expect(configuration.entryCostLimit == configuration.costLimit / 10)
    }
}
