import Foundation
import Imago

/// The real ``ImagePipeline`` behind ``MockImageLoader`` and
/// ``MockImageService``, with the network and the decoder replaced by a
/// table of stubbed images and errors.
///
/// Because the doubles run Imago's own pipeline and client, they behave as
/// the real thing does by construction: a repeated URL comes from their
/// memory cache, errors arrive wrapped as ``ImagePipelineError`` (the stubbed
/// error is their `underlying`), cancellation and merging work as in
/// production. Everything answers on the caller's thread.
final class StubbedPipeline: Sendable {
    let loader = MockDataLoader()
    let pipeline: ImagePipeline
    private let images: StubbedImageDecoder

    init() {
        let images = StubbedImageDecoder()
        self.images = images
        pipeline = ImagePipeline(configuration: ImagePipeline.Configuration(
            dataLoader: loader,
            imageCache: ImageCache(),
            decoder: images,
            workQueue: ImmediateQueue()
        ))
    }

    /// Sets the answer for `url`. A URL already loaded keeps coming from the
    /// memory cache, as with a real pipeline.
    func stub(_ url: URL, _ result: Result<Image, any Error>) {
        switch result {
        case .success(let image):
            loader.stub(url, .data(images.token(for: image), contentType: "image/png"))
        case .failure(let error):
            loader.stub(url, .failure(error))
        }
    }
}

/// Decodes the tokens ``StubbedPipeline`` serves as bodies back into the
/// images they stand for.
private final class StubbedImageDecoder: ImageDecoding {
    private let images = Locked<[Data: Image]>([:])

    /// A body that decodes to `image`.
    func token(for image: Image) -> Data {
        images.withLock { images in
            let token = Data("stubbed image \(images.count)".utf8)
            images[token] = image
            return token
        }
    }

    func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        guard let image = images.withLock({ $0[data] }) else {
            throw ImageDecodingError(.unsupportedFormat, message: "not a stubbed image")
        }
        return image
    }
}
