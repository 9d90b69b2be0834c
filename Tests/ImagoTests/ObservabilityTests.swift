import Foundation
import Imago
import ImagoTesting
import InMemoryLogging
import Logging
import MetricsTestKit
import Testing

/// The pipeline's logging, metrics and per-request metrics, through the
/// injected logger and metrics factory (never the process-wide systems).
@Suite struct ObservabilityTests {
    let loader = MockDataLoader()
    let decoder = MockImageDecoder(returning: TestImages.gradient(width: 8, height: 6))
    let url = URL(string: "https://img.example/cat.png")!
    let metrics = TestMetrics()
    let logs = InMemoryLogHandler()

    func pipeline() -> ImagePipeline {
        var logger = Logger(label: "test") { _ in logs }
        logger.logLevel = .debug
        return ImagePipeline(configuration: .init(
            dataLoader: loader, dataCache: InMemoryDataCache(), decoder: decoder, logger: logger, metricsFactory: metrics
        ))
    }

    @Test func aLoadCountsItsSourceItsBytesAndTimesItsDecode() async throws {
        loader.stub(url, .image(TestImages.pngSignature))
        let pipeline = pipeline()
        _ = try await pipeline.image(for: ImageRequest(url: url))
        _ = try await pipeline.image(for: ImageRequest(url: url))
        #expect(try metrics.expectCounter("imago_pipeline_images", [("source", "network")]).totalValue == 1)
        #expect(try metrics.expectCounter("imago_pipeline_images", [("source", "memory")]).totalValue == 1)
        #expect(try metrics.expectCounter("imago_pipeline_loaded_bytes").totalValue == Int64(TestImages.pngSignature.count))
        #expect(try metrics.expectTimer("imago_pipeline_decode_duration", [("format", "png")]).values.count == 1)
        let loaded = logs.entries.filter { $0.message.description == "loaded" }
        #expect(loaded.count == 2)
        #expect(loaded.first?.metadata["url"]?.description == url.absoluteString)
    }

    /// The bytes-then-decode path (the image server's: `sourceBytes`, then
    /// `decode`) behaves as the decode stage: the decode is timed, and
    /// bytes that do not decode leave the disk cache; a decode stopped at
    /// its deadline leaves them.
    @Test func decodingFetchedBytesIsTimedAndUndecodableBytesLeaveTheDiskCache() async throws {
        let cache = InMemoryDataCache()
        let broken = URL(string: "https://img.example/broken.png")!
        loader.stub(url, .image(TestImages.pngSignature))
        loader.stub(broken, .image(Data("not an image".utf8)))
        let failing = MockImageDecoder { data in
            guard data == TestImages.pngSignature else { throw ImageDecodingError(.couldNotOpen, message: "not an image") }
            return TestImages.gradient(width: 8, height: 6)
        }
        let pipeline = ImagePipeline(configuration: .init(dataLoader: loader, dataCache: cache, decoder: failing, metricsFactory: metrics))
        let good = try await pipeline.sourceBytes(for: ImageRequest(url: url))
        _ = try pipeline.decode(good.data, for: ImageRequest(url: url))
        #expect(try metrics.expectTimer("imago_pipeline_decode_duration", [("format", "png")]).values.count == 1)
        let bad = try await pipeline.sourceBytes(for: ImageRequest(url: broken))
        #expect(cache.keys.count == 2)
        #expect(throws: ImagePipelineError.self) { try pipeline.decode(bad.data, for: ImageRequest(url: broken)) }
        #expect(cache.keys.count == 1, "the undecodable bytes left the disk cache; the good ones stayed")
        // Stopped at a deadline: the bytes stay.
        let stopping = ImagePipeline(configuration: .init(dataLoader: loader, dataCache: cache, decoder: MockImageDecoder { _ in
            throw WorkDeadlineExceeded(deadline: WorkDeadline(uptimeNanoseconds: 0))
        }))
        #expect(throws: WorkDeadlineExceeded.self) { try stopping.decode(good.data, for: ImageRequest(url: url)) }
        #expect(cache.keys.count == 1)
    }

    @Test func aFailureIsCountedByItsCodeAndLogged() async throws {
        loader.stub(url, .status(404))
        await #expect(throws: ImagePipelineError.self) { try await pipeline().image(for: ImageRequest(url: url)) }
        #expect(try metrics.expectCounter("imago_pipeline_failures", [("code", "responseRejected")]).totalValue == 1)
        #expect(logs.entries.contains { $0.level == .info && $0.message.description == "load failed" })
    }

    @Test func theResponseSaysWhereTheTimeWent() async throws {
        loader.stub(url, .image(TestImages.pngSignature))
        let pipeline = pipeline()
        let request = ImageRequest(url: url, processors: [ImageProcessors.Blur(radius: 1)])
        let loaded = try await pipeline.image(for: request)
        let metrics = loaded.metrics
        #expect(metrics.byteCount == TestImages.pngSignature.count)
        let stages = [metrics.loadingDuration, metrics.decodingDuration, metrics.processingDuration]
        #expect(stages.allSatisfy { ($0 ?? -1) >= 0 })
        #expect(metrics.totalDuration >= stages.compactMap { $0 }.reduce(0, +) - 1e-9)
        #expect(metrics.waitingDuration >= 0)

        let hit = try await pipeline.image(for: request)
        #expect(hit.source == .memory)
        #expect(hit.metrics.loadingDuration == nil && hit.metrics.decodingDuration == nil && hit.metrics.byteCount == nil)
    }

    @Test func byDefaultNothingIsLogged() async throws {
        // The default logger drops everything: a library writes nowhere unasked.
        let logger = ImagePipeline.Configuration().logger
        #expect(logger.handler is SwiftLogNoOpLogHandler)
    }
}
