import Foundation
import Imago
import ImagoTesting

// The implementations the contract suites run against, built as a user
// builds them: public API only (this package cannot see anything else).

let placeholder = TestImages.solid(width: 1, height: 1, red: 0, green: 0, blue: 0)
let red = TestImages.solid(width: 3, height: 3, red: 255, green: 0, blue: 0)
let blue = TestImages.solid(width: 5, height: 5, red: 0, green: 0, blue: 255)

func url(_ name: String) -> URL { URL(string: "https://images.example/\(name)")! }

/// A decoder that turns each stubbed body back into its image: lets a real
/// pipeline serve scripted images without real codecs.
final class ImagesByBody: ImageDecoding {
    private let images = Recorder<(Data, Image)>()

    /// A body that decodes to `image`.
    func body(for image: Image) -> Data {
        let body = TestImages.pngSignature + Data("#\(images.count)".utf8)
        images.record((body, image))
        return body
    }

    func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        guard let image = images.values.first(where: { $0.0 == data })?.1 else {
            throw ImageDecodingError(.unsupportedFormat, message: "no image for these bytes")
        }
        return image
    }
}

/// A real pipeline over a ``MockDataLoader``, answering at once.
struct ScriptedPipeline {
    let loader = MockDataLoader()
    let images = ImagesByBody()
    let pipeline: ImagePipeline

    init(workQueue: any Dispatching = ImmediateQueue()) {
        pipeline = ImagePipeline(configuration: .init(dataLoader: loader, decoder: images, workQueue: workQueue))
    }

    func stub(_ url: URL, _ result: Result<Image, any Error>) {
        switch result {
        case .success(let image): loader.stub(url, .image(images.body(for: image)))
        case .failure(let error): loader.stub(url, .failure(error))
        }
    }
}

/// An ``ImageService`` under contract, with its way to script answers.
struct ServiceSubject: Sendable, CustomStringConvertible {
    let description: String
    let make: @Sendable (_ responseQueue: (any Dispatching)?) -> (service: any ImageService, stub: (URL, Result<Image, any Error>) -> Void)

    static let imageClient = ServiceSubject(description: "ImageClient") { queue in
        let scripted = ScriptedPipeline()
        return (ImageClient(pipeline: scripted.pipeline, responseQueue: queue, log: { _ in }), scripted.stub)
    }

    static let mockImageService = ServiceSubject(description: "MockImageService") { queue in
        let service = MockImageService(queue: queue)
        return (service, service.stub)
    }

    static let all = [imageClient, mockImageService]
}

/// An ``ImageLoading`` under contract, with its way to script answers.
struct LoaderSubject: Sendable, CustomStringConvertible {
    let description: String
    let make: @Sendable () -> (loader: any ImageLoading, stub: (URL, Result<Image, any Error>) -> Void)

    static let pipeline = LoaderSubject(description: "ImagePipeline") {
        let scripted = ScriptedPipeline()
        return (scripted.pipeline, scripted.stub)
    }

    static let imageClient = LoaderSubject(description: "ImageClient") {
        let scripted = ScriptedPipeline()
        return (ImageClient(pipeline: scripted.pipeline, responseQueue: nil), scripted.stub)
    }

    static let mockImageLoader = LoaderSubject(description: "MockImageLoader") {
        let loader = MockImageLoader()
        return (loader, loader.stub)
    }

    static let mockImageService = LoaderSubject(description: "MockImageService") {
        let service = MockImageService()
        return (service, service.stub)
    }

    static let all = [pipeline, imageClient, mockImageLoader, mockImageService]
}
