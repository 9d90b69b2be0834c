import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import Testing

/// The "immediate queue" style with Imago's real parts: real codecs, a real
/// memory cache, a real pipeline; only the network is a double. The image is
/// there on the line after the call.
@Suite struct ImmediateStyleTests {
    let photo = URL(string: "https://images.example/photo.png")!
    let image = TestImages.gradient(width: 6, height: 4)

    func client(_ loader: MockDataLoader) -> ImageClient {
        var configuration = ImagePipeline.Configuration.withCodecs
        configuration.dataLoader = loader
        configuration.workQueue = ImmediateQueue()
        return ImageClient(pipeline: ImagePipeline(configuration: configuration), responseQueue: ImmediateQueue(), log: { _ in })
    }

    @Test func aRealPNGIsDecodedAndShownBeforeSetImageReturns() throws {
        let loader = MockDataLoader()
        loader.stub(photo, .image(try ImageEncoders.png().encode(image)))
        let target = RecordingImageTarget()

        let display = client(loader).setImage(on: target, from: photo, placeholder: nil)

        #expect(target.displayed == [nil, image])
        #expect(display.outcome?.image == image)
        #expect(loader.requests.map(\.url) == [photo])
    }

    @Test func aDownloadCompletesBeforeDownloadImageReturns() throws {
        let loader = MockDataLoader()
        loader.stub(photo, .image(try ImageEncoders.png().encode(image)))
        let results = Recorder<Result<Image, any Error>>()

        let task = client(loader).downloadImage(from: photo, completion: results.record)

        #expect(task != nil)
        #expect(try results.values.map { try $0.get() } == [image])
    }

    @Test func bytesThatDoNotDecodeFailBeforeSetImageReturns() {
        let loader = MockDataLoader()
        loader.stub(photo, .image(TestImages.pngSignature))   // a PNG signature and nothing else
        let target = RecordingImageTarget()
        let placeholder = TestImages.solid(width: 1, height: 1)

        let display = client(loader).setImage(on: target, from: photo, placeholder: placeholder)

        #expect(target.displayed == [placeholder])
        #expect(ImagePipelineError.Code.decodingFailed.matches(display.outcome?.error ?? CancellationError()))
    }

    /// A held response makes the load wait: once it suspended, it resumes in
    /// the background when the test releases the response, so the test
    /// awaits the display (no polling). The client is released as soon as
    /// `setImage` returns: the display still finishes.
    @Test func aHeldResponseCompletesWhenTheTestReleasesIt() async throws {
        let loader = MockDataLoader()
        loader.stub(photo, .image(try ImageEncoders.png().encode(image)).held())
        let target = RecordingImageTarget()

        let display = client(loader).setImage(on: target, from: photo, placeholder: nil)
        #expect(!display.isFinished)
        loader.tasks(for: photo).first?.complete()

        #expect(await display.finished().image == image)
        #expect(target.current == image)
    }
}
