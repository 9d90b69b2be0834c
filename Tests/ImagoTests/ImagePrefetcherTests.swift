import Foundation
@_spi(Testing) import Imago
import ImagoTesting
import Testing

@Suite(.timeLimit(.minutes(1))) struct ImagePrefetcherTests {
    let loader = MockDataLoader()
    let memory = ImageCache(configuration: .init(costLimit: 1 << 20))
    let disk = InMemoryDataCache()
    let pipeline: ImagePipeline
    let url = URL(string: "https://img.example/next.png")!

    init() {
        pipeline = ImagePipeline(configuration: .init(
            dataLoader: loader, dataCache: disk, imageCache: memory,
            decoder: MockImageDecoder(returning: TestImages.solid(width: 3, height: 3)), workQueue: ImmediateQueue()
        ))
    }

    @Test func prefetchingIntoMemoryMakesTheNextRequestAHit() async throws {
        loader.stub(url, .data(TestImages.pngSignature, contentType: "image/png", headers: ["Cache-Control": "max-age=60"]))
        let prefetcher = ImagePrefetcher(pipeline: pipeline)
        prefetcher.startPrefetching([ImageRequest(url: url)])
        try await eventually { prefetcher.activeCount == 0 }
        #expect(try await pipeline.image(for: ImageRequest(url: url)).source == .memory)
        #expect(loader.tasks.count == 1)
    }

    @Test func prefetchingToDiskStoresTheBytesWithoutDecoding() async throws {
        loader.stub(url, .data(TestImages.pngSignature, contentType: "image/png", headers: ["Cache-Control": "max-age=60"]))
        let prefetcher = ImagePrefetcher(pipeline: pipeline, destination: .diskCache)
        prefetcher.startPrefetching([ImageRequest(url: url)])
        try await eventually { prefetcher.activeCount == 0 }
        #expect(disk.keys == [try #require(pipeline.dataCacheKey(for: ImageRequest(url: url)))])
        #expect(memory.count == 0)
        #expect(try await pipeline.image(for: ImageRequest(url: url)).source == .disk)
    }

    @Test func prefetchRunsAtLowPriorityAndIsCancellable() async throws {
        loader.stub(url, MockResponse.image(TestImages.pngSignature).held())
        let prefetcher = ImagePrefetcher(pipeline: pipeline)
        prefetcher.startPrefetching([ImageRequest(url: url), ImageRequest(url: url)])
        let download = await loader.waitForTask(for: url)
        #expect(loader.tasks.count == 1)
        prefetcher.stopPrefetching([ImageRequest(url: url)])
        try await eventually { download.isCancelled }
        #expect(download.isCancelled)
        #expect(prefetcher.activeCount == 0)
    }

    @Test func stoppingAPrefetchKeepsWorkARealRequestWants() async throws {
        loader.stub(url, MockResponse.image(TestImages.pngSignature).held())
        let prefetcher = ImagePrefetcher(pipeline: pipeline)
        prefetcher.startPrefetching([ImageRequest(url: url)])
        let download = await loader.waitForTask(for: url)
        let real = pipeline.imageTask(for: ImageRequest(url: url, priority: .high))
        try await eventually { pipeline.statistics.mergedDecodes == 1 }   // the real request has joined
        prefetcher.stopAll()
        #expect(prefetcher.activeCount == 0, "stopping forgets the prefetches at once")
        #expect(!download.isCancelled)
        download.complete()
        #expect(try await real.response.source == .network)
    }
}

@Suite struct ImageProcessorsTests {
    @Test func identifiersNameTheParameters() {
        #expect(ImageProcessors.Resize(width: 10, height: 20, mode: .crop).identifier == "resize(10x20,crop)")
        #expect(ImageProcessors.RoundedCorners(radius: 4).identifier == "roundedCorners(4)")
        #expect(ImageProcessors.Blur(radius: 2).identifier == "blur(2)")
        #expect(ImageProcessors.Resize(width: 10, height: 20).identifier != ImageProcessors.Resize(width: 10, height: 21).identifier)
    }

    @Test func resizeProcessorCrops() throws {
        let image = try ImageProcessors.Resize(width: 50, height: 50, mode: .crop).process(TestImages.gradient(width: 200, height: 100))
        #expect(image.width == 50 && image.height == 50)
    }

    @Test func roundedCornersMakeTheCornersTransparentAndKeepTheMiddle() throws {
        let image = try ImageProcessors.RoundedCorners(radius: 8).process(TestImages.solid(width: 32, height: 32).converted(to: .rgb8))
        #expect(image.pixelFormat == .rgba8)
        #expect(image.pixel(x: 0, y: 0)[3] == 0)
        #expect(image.pixel(x: 31, y: 31)[3] == 0)
        #expect(image.pixel(x: 16, y: 16)[3] == 255)
        #expect(image.pixel(x: 16, y: 0)[3] == 255)
        #expect(image.pixel(x: 8, y: 8)[3] == 255)
        // Along the curve, partly covered pixels are partly transparent.
        let edge = image.pixel(x: 2, y: 2)[3]
        #expect(edge > 0 && edge < 255)
    }

    @Test func blurSpreadsAnEdgeAndKeepsFlatAreas() throws {
        var pixels = [UInt8](repeating: 0, count: 20 * 20)
        for y in 0..<20 { for x in 10..<20 { pixels[y * 20 + x] = 200 } }
        let image = Image(width: 20, height: 20, pixelFormat: .gray8, pixels: pixels)
        let blurred = try ImageProcessors.Blur(radius: 2).process(image)
        #expect(blurred.pixel(x: 0, y: 10) == [0])
        #expect(blurred.pixel(x: 19, y: 10) == [200])
        let left = blurred.pixel(x: 9, y: 10)[0], right = blurred.pixel(x: 10, y: 10)[0]
        #expect(left > 0 && left < 100 && right > 100 && right < 200)
        #expect(try ImageProcessors.Blur(radius: 0).process(image) == image)
    }
}
