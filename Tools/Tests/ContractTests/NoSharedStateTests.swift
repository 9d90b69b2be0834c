import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import Testing

/// A pipeline a user builds, and every double, shares nothing with another:
/// only `ImagePipeline.shared` and `ImageClient.shared` use process-wide caches.
@Suite struct NoSharedStateTests {
    @Test func twoPipelinesWithDefaultConfigurationsHaveTheirOwnMemoryCaches() async throws {
        let first = ScriptedPipeline()
        let second = ScriptedPipeline()
        first.stub(url("same"), .success(red))
        second.stub(url("same"), .success(blue))

        #expect(try await first.pipeline.image(from: url("same")) == red)
        #expect(second.pipeline.cachedImage(for: ImageRequest(url: url("same"))) == nil)
        #expect(try await second.pipeline.image(from: url("same")) == blue)
        #expect(first.pipeline.cachedImage(for: ImageRequest(url: url("same"))) == red)
    }

    @Test func defaultConfigurationsHaveNoDiskCacheAndNoSharedMemoryCache() throws {
        for configuration in [ImagePipeline.Configuration(), .withCodecs] {
            #expect(configuration.dataCache == nil)
            let memory = try #require(configuration.imageCache as? ImageCache)
            #expect(memory !== ImageCache.shared)
        }
        #expect((ImagePipeline.Configuration().imageCache as? ImageCache) !== (ImagePipeline.Configuration().imageCache as? ImageCache))
        #expect((ImagePipeline.Configuration.withCodecs.imageCache as? ImageCache) !== (ImagePipeline.Configuration.withCodecs.imageCache as? ImageCache))
    }

    @Test func onlyTheSharedPipelineUsesTheProcessWideCaches() {
        #expect((ImagePipeline.shared.configuration.imageCache as? ImageCache) === ImageCache.shared)
        #expect(ImagePipeline.shared.configuration.dataCache is DataCache)
        #expect(ImageClient.shared.pipeline === ImagePipeline.shared)
    }

    /// The same URL in many tests at once, each with its own double: no one sees another's image.
    @Test func doublesRunningInParallelNeverSeeEachOthersImages() async throws {
        let shared = url("same")
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<32 {
                group.addTask {
                    let image = TestImages.solid(width: index + 1, height: 1)
                    let service = MockImageService()
                    service.stub(shared, .success(image))
                    let loader = MockImageLoader()
                    loader.stub(shared, .success(image))
                    let target = RecordingImageTarget()
                    service.setImage(on: target, from: shared, placeholder: nil)
                    let loaded = try await loader.image(from: shared)
                    return target.current == image && loaded == image
                }
            }
            for try await sawOwnImage in group { #expect(sawOwnImage) }
        }
    }
}
