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
