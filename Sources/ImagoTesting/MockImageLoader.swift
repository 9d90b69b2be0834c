import Foundation
import Imago

/// An ``ImageLoading`` scripted per URL: an image or a failure. No global
/// state: each test makes its own, so tests run in parallel.
///
/// ```swift
/// let images = MockImageLoader()
/// images.stub(coverURL, .success(TestImages.solid(width: 4, height: 4)))
/// let model = AlbumViewModel(images: images)
/// ```
///
/// It answers through a real ``ImagePipeline`` whose network and decoder
/// are the stubs, so it behaves as ``ImageClient`` and ``ImagePipeline`` do:
/// a failure throws ``ImagePipelineError`` with the stubbed error beneath it
/// (`error.first(URLError.self)`), a URL that loaded once comes from the
/// memory cache, and a cancelled caller gets `CancellationError`.
public final class MockImageLoader: ImageLoading {
    /// The error beneath the ``ImagePipelineError`` for a URL with no stub.
    public typealias Unstubbed = MockDataLoader.Unstubbed

    private let stubbed = StubbedPipeline()
    private let requested = Locked<[URL]>([])

    /// Creates a loader with no stubs.
    public init() {}

    /// Sets the answer for `url`. Like a real pipeline, a URL that already
    /// loaded keeps coming from the memory cache.
    public func stub(_ url: URL, _ result: Result<Image, any Error>) {
        stubbed.stub(url, result)
    }

    /// Every URL asked for, in order.
    public var requests: [URL] { requested.withLock { $0 } }

    public func image(from url: URL) async throws -> Image {
        requested.withLock { $0.append(url) }
        return try await stubbed.pipeline.image(from: url)
    }
}
