import Foundation
@_spi(Testing) import Imago
import ImagoTesting
import Testing

/// The image client over the pipeline, with ImagoTesting doubles.
@Suite(.timeLimit(.minutes(1))) struct ImageClientTests {
    let loader = MockDataLoader()
    let memory = ImageCache(configuration: .init(costLimit: 1 << 20))
    let queue = ManualQueue()
    let logged = LogLines()
    let client: ImageClient
    let cat = URL(string: "https://img.example/cat.png")!
    let dog = URL(string: "https://img.example/dog.png")!
    let catImage = TestImages.solid(width: 2, height: 2, red: 1)
    let dogImage = TestImages.solid(width: 2, height: 2, red: 2)
    let placeholder = TestImages.solid(width: 1, height: 1, red: 9)

    init() {
        // The decoder tells the two images apart by their bytes.
        let (cat, dog) = (catImage, dogImage)
        let decoder = ImageDecoderRegistry([.png: MockDecoderByLength(images: [8: cat, 9: dog])])
        let pipeline = ImagePipeline(configuration: .init(dataLoader: loader, imageCache: memory, decoder: decoder, workQueue: ImmediateQueue()))
        let logged = self.logged
        client = ImageClient(pipeline: pipeline, responseQueue: queue) { line in logged.append(line) }
        loader.stub(self.cat, MockResponse.image(TestImages.pngSignature).held())
        loader.stub(self.dog, MockResponse.image(TestImages.pngSignature + Data([0])).held())
    }

    /// Runs the response queue as its work arrives until `display` ends, and returns how it ended.
    private func runResponseQueue(until display: ImageDisplayTask) async -> ImageDisplayTask.Outcome {
        while !display.isFinished {
            await queue.waitForWork()
            queue.runAll()
        }
        return await display.finished()
    }

    // MARK: downloadImage

    @Test func cacheHitCompletesSynchronouslyWithoutCreatingATask() throws {
        memory.store(catImage, for: try #require(client.pipeline.cacheKey(for: ImageRequest(url: cat))))
        let result = Locked<Image?>(nil)
        let task = client.downloadImage(from: cat) { value in result.withLock { $0 = try? value.get() } }
        #expect(task == nil)
        #expect(result.withLock { $0 } == catImage)
        #expect(loader.tasks.isEmpty)
        #expect(queue.pendingCount == 0)
    }

    @Test func missCreatesOneTaskStartsItAndDeliversThroughTheResponseQueue() async throws {
        let result = Locked<Result<Image, any Error>?>(nil)
        let task = client.downloadImage(from: cat) { value in result.withLock { $0 = value } }
        #expect(task != nil)
        let download = await loader.waitForTask(for: cat)
        download.complete()
        // Nothing is delivered until the queue runs.
        await queue.waitForWork()
        #expect(result.withLock { $0 } == nil)
        queue.runAll()
        #expect(try result.withLock { $0 }?.get() == catImage)
        #expect(loader.tasks.count == 1)
        // Success cached it: the next call is a synchronous hit.
        #expect(client.downloadImage(from: cat) { _ in } == nil)
    }

    @Test func failureDeliversTheError() async throws {
        loader.stub(cat, .status(500, contentType: "image/png"))
        let result = Locked<Result<Image, any Error>?>(nil)
        client.downloadImage(from: cat) { value in result.withLock { $0 = value } }
        await queue.waitForWork()
        queue.runAll()
        guard case .failure(let error)? = result.withLock({ $0 }) else {
            Issue.record("expected a failure")
            return
        }
        #expect((error as? ImagePipelineError)?.code == .responseRejected)
    }

    @Test func withNoQueueCompletionsRunDirectly() async throws {
        let pipeline = ImagePipeline(configuration: .init(dataLoader: loader, imageCache: memory, decoder: MockImageDecoder(returning: catImage)))
        let direct = ImageClient(pipeline: pipeline, responseQueue: nil)
        loader.stub(cat, .image(TestImages.pngSignature))
        let image: Image = try await withCheckedThrowingContinuation { continuation in
            direct.downloadImage(from: cat) { continuation.resume(with: $0) }
        }
        #expect(image == catImage)
    }

    @Test func asyncFormLoadsTheImage() async throws {
        let call = Task { [client, cat] in try await client.image(from: cat) }
        await loader.waitForTask(for: cat).complete()
        #expect(try await call.value == catImage)
    }

    // MARK: setImage

    @Test func setImageShowsThePlaceholderThenTheImageAndUntracks() async throws {
        let target = RecordingImageTarget()
        let display = client.setImage(on: target, from: cat, placeholder: placeholder)
        #expect(target.displayed == [placeholder])
        #expect(client.trackedTargetCount == 1)
        await loader.waitForTask(for: cat).complete()
        #expect(await runResponseQueue(until: display).image == catImage)
        #expect(target.displayed == [placeholder, catImage])
        #expect(client.trackedTargetCount == 0)
    }

    @Test func failureKeepsThePlaceholderAndLogsTheError() async throws {
        loader.stub(cat, .status(404, contentType: "image/png"))
        let target = RecordingImageTarget()
        let display = client.setImage(on: target, from: cat, placeholder: placeholder)
        #expect(await runResponseQueue(until: display).error != nil)
        #expect(target.displayed == [placeholder])
        #expect(logged.lines.first?.contains("cat.png") == true)
        #expect(client.trackedTargetCount == 0)
    }

    @Test func settingAgainCancelsTheTaskAlreadyTrackedForTheTarget() async throws {
        let target = RecordingImageTarget()
        client.setImage(on: target, from: cat, placeholder: placeholder)
        let first = await loader.waitForTask(for: cat)
        client.setImage(on: target, from: dog, placeholder: placeholder)
        try await eventually { first.isCancelled }
        #expect(first.isCancelled)
        #expect(client.trackedTargetCount == 1)
    }

    @Test func aReusedTargetNeverShowsTheOldImageEvenIfItArrivesLater() async throws {
        // A second requester keeps the cat download alive after the cell moves on.
        let other = RecordingImageTarget()
        let otherDisplay = client.setImage(on: other, from: cat, placeholder: nil)
        let cell = RecordingImageTarget()
        let replaced = client.setImage(on: cell, from: cat, placeholder: placeholder)
        let cellDisplay = client.setImage(on: cell, from: dog, placeholder: placeholder)
        #expect(replaced.outcome?.isCancelled == true)
        let catDownload = await loader.waitForTask(for: cat)
        let dogDownload = await loader.waitForTask(for: dog)
        dogDownload.complete()
        #expect(await runResponseQueue(until: cellDisplay).image == dogImage)
        catDownload.complete()                // the old image arrives last
        #expect(await runResponseQueue(until: otherDisplay).image == catImage)
        #expect(cell.displayed == [placeholder, placeholder, dogImage])
        #expect(!cell.displayed.contains(catImage))
    }

    @Test func nilURLCancelsAndClears() async throws {
        let target = RecordingImageTarget()
        client.setImage(on: target, from: cat, placeholder: placeholder)
        let download = await loader.waitForTask(for: cat)
        client.setImage(on: target, from: nil, placeholder: nil)
        try await eventually { download.isCancelled }
        #expect(target.current == nil)
        #expect(client.trackedTargetCount == 0)
    }

    @Test func memoryHitIsShownAtOnceWithoutAPlaceholder() throws {
        memory.store(catImage, for: try #require(client.pipeline.cacheKey(for: ImageRequest(url: cat))))
        let target = RecordingImageTarget()
        client.setImage(on: target, from: cat, placeholder: placeholder)
        #expect(target.displayed == [catImage])
        #expect(loader.tasks.isEmpty)
    }
}

/// Lines collected from a log closure.
final class LogLines: Sendable {
    private let storage = Locked<[String]>([])
    func append(_ line: String) { storage.withLock { $0.append(line) } }
    var lines: [String] { storage.withLock { $0 } }
}

/// Decodes to a fixed image chosen by the data's length.
struct MockDecoderByLength: ImageDecoding {
    let images: [Int: Image]
    func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        guard let image = images[data.count] else { throw ImageDecodingError(.couldNotOpen, message: "unknown length \(data.count)") }
        return image
    }
}
