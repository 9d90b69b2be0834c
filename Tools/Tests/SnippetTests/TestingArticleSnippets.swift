// The examples of ImagoTesting's article "Testing code that loads images",
// each a region (see SnippetsMatchTheDocsTests) and each a test that runs.
import Foundation
import Imago
import ImagoTesting
import Testing

@Suite struct TestingArticleExamples {
    // The names the examples take for granted.
    let coverURL = URL(string: "https://images.example/cover.png")!
    let brokenURL = URL(string: "https://images.example/broken.png")!
    let pageURL = URL(string: "https://images.example/page.html")!
    let cover = TestImages.solid(width: 4, height: 4, red: 10, green: 20, blue: 200)
    let placeholder = TestImages.solid(width: 1, height: 1, red: 0, green: 0, blue: 0)

    // snippet: testing-loader-mock
    /// App code: depends on `ImageLoading`, not on a concrete client.
    struct CoverLoader {
        let images: any ImageLoading
        func cover(for url: URL) async -> Image? { try? await images.image(from: url) }
    }

    @Test func aBrokenCoverShowsNothing() async {
        let images = MockImageLoader()
        images.stub(coverURL, .success(cover))
        images.stub(brokenURL, .failure(URLError(.badServerResponse)))
        let loader = CoverLoader(images: images)

        #expect(await loader.cover(for: coverURL) == cover)
        #expect(await loader.cover(for: brokenURL) == nil)
        #expect(images.requests == [coverURL, brokenURL])
    }
    // end snippet

    // snippet: testing-service-mock
    @Test func theRowAsksForItsArtwork() {
        let images = MockImageService()
        images.stub(coverURL, .success(cover))
        let cell = RecordingImageTarget()

        let display = images.setImage(on: cell, from: coverURL, placeholder: placeholder)

        #expect(images.setImageCalls.map(\.url) == [coverURL])
        #expect(cell.displayed == [placeholder, cover])   // the placeholder first, then the image
        #expect(display.outcome?.image == cover)          // finished before setImage returned
    }
    // end snippet

    // snippet: testing-immediate-queue
    @Test func theImageIsSetOnTheNextLine() {
        let loader = MockDataLoader()
        loader.stub(coverURL, .image(TestImages.pngSignature))   // answers as soon as it is resumed
        let pipeline = ImagePipeline(configuration: .init(
            dataLoader: loader,
            decoder: MockImageDecoder(returning: cover),
            workQueue: ImmediateQueue()
        ))
        let client = ImageClient(pipeline: pipeline, responseQueue: ImmediateQueue())
        let cell = RecordingImageTarget()

        client.setImage(on: cell, from: coverURL, placeholder: placeholder)

        #expect(cell.current == cover)   // no await, no expectation, no sleep
    }
    // end snippet

    // snippet: testing-manual-queue
    @Test func nothingShowsUntilTheMainQueueRuns() async {
        let loader = MockDataLoader()
        loader.stub(coverURL, .image(TestImages.pngSignature))
        // The decoder runs on the default work queue, in the background.
        let pipeline = ImagePipeline(configuration: .init(dataLoader: loader, decoder: MockImageDecoder(returning: cover)))
        let main = ManualQueue()
        let client = ImageClient(pipeline: pipeline, responseQueue: main)
        let cell = RecordingImageTarget()

        let display = client.setImage(on: cell, from: coverURL, placeholder: placeholder)
        await main.waitForWork()            // the display is queued: suspends, never polls
        #expect(cell.current == placeholder)

        main.runAll()
        #expect(cell.current == cover)
        #expect(await display.finished().image == cover)
    }
    // end snippet

    // snippet: testing-awaiting
    @Test func completionsCanBeAwaited() async throws {
        let loader = MockDataLoader()
        loader.stub(coverURL, .image(TestImages.pngSignature).held())   // the test releases it
        let pipeline = ImagePipeline(configuration: .init(dataLoader: loader, decoder: MockImageDecoder(returning: cover)))
        let client = ImageClient(pipeline: pipeline, responseQueue: nil)

        let results = Recorder<Result<Image, any Error>>()
        client.downloadImage(from: coverURL, completion: results.record)
        await loader.waitForTask(for: coverURL).complete()

        let result = await results.waitForValues(1)[0]
        #expect(try result.get() == cover)
    }
    // end snippet

    // snippet: testing-spy-codec
    @Test func theDecoderAsksForTheFirstFrame() throws {
        let spy = SpyCodecTable(opened: OpenedImage(width: 4, height: 4), image: cover)
        let decoder = CodecDecoder(format: .png, functions: spy.functions)

        let image = try decoder.decode(TestImages.pngSignature, options: ImageDecodingOptions(frameIndex: 0))

        #expect(image == cover)
        #expect(spy.openCalls.map(\.data) == [TestImages.pngSignature])
        #expect(spy.makeImageCalls.map(\.frameIndex) == [0])
    }
    // end snippet

    // snippet: testing-response-checks
    @Test func whatTheResponseChecksReject() async {
        let loader = MockDataLoader()
        loader.stub(brokenURL, .status(404))
        loader.stub(pageURL, .data(Data("<html></html>".utf8), contentType: "text/html"))
        let pipeline = ImagePipeline(configuration: .init(dataLoader: loader, decoder: MockImageDecoder(returning: cover)))

        let missing = await #expect(throws: ImagePipelineError.self) { try await pipeline.image(from: brokenURL) }
        #expect(missing?.contains(ResponseError.Code.unacceptableStatus) == true)
        #expect(missing?.first(ResponseError.self)?.statusCode == 404)

        let page = await #expect(throws: ImagePipelineError.self) { try await pipeline.image(from: pageURL) }
        #expect(page?.contains(ResponseError.Code.unacceptableContentType) == true)
    }
    // end snippet

    // snippet: testing-error-matching
    @Test func aFailedDisplayKeepsThePlaceholder() async {
        let images = MockImageService()
        images.stub(brokenURL, .failure(URLError(.notConnectedToInternet)))
        let cell = RecordingImageTarget()

        let outcome = await images.setImage(on: cell, from: brokenURL, placeholder: placeholder).finished()

        #expect(cell.current == placeholder)
        // Errors arrive as they do from ImageClient: the pipeline's, with yours beneath.
        let error = outcome.error as? ImagePipelineError
        #expect(error?.code == .dataLoadingFailed)
        #expect(error?.first(URLError.self)?.code == .notConnectedToInternet)
    }
    // end snippet
}
