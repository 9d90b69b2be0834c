import Foundation
import Imago

/// An ``ImageService`` that records every call and answers from stubs.
///
/// It is a real ``ImageClient`` over a pipeline whose network and decoder
/// are the stubs, so it keeps every promise `ImageClient` makes: the
/// placeholder first, a failure keeps it, a reused target never shows a
/// stale image, a URL that loaded once comes from memory (`downloadImage`
/// returns `nil` and has already called back). Completions and displays run
/// on `queue`, or at once, before the call returns, when it is `nil` or an
/// ``ImmediateQueue``.
///
/// ```swift
/// let images = MockImageService()
/// images.stub(coverURL, .success(cover))
/// let display = images.setImage(on: cell, from: coverURL, placeholder: nil)
/// #expect(cell.current == cover)              // already shown
/// #expect(display.outcome?.image == cover)
/// ```
public final class MockImageService: ImageService {
    /// One recorded `setImage` call.
    public struct SetImageCall: Sendable {
        /// The target, weakly held.
        public weak var target: (any ImageTarget)?
        /// The URL.
        public let url: URL?
        /// The placeholder.
        public let placeholder: Image?
    }

    private let stubbed = StubbedPipeline()
    private let client: ImageClient
    private let setCalls = Locked<[SetImageCall]>([])
    private let downloads = Locked<[URL]>([])
    private let loads = Locked<[URL]>([])
    private let failures = Locked<[String]>([])

    /// Creates a service; completions and displays of loaded images run on
    /// `queue`, or at once when `nil`.
    public init(queue: (any Dispatching)? = nil) {
        let failures = self.failures
        client = ImageClient(pipeline: stubbed.pipeline, responseQueue: queue) { line in
            failures.withLock { $0.append(line) }
        }
    }

    /// Sets the answer for `url`. Like a real client, a URL that already
    /// loaded keeps coming from the memory cache.
    public func stub(_ url: URL, _ result: Result<Image, any Error>) {
        stubbed.stub(url, result)
    }

    /// Every `setImage` call, in order.
    public var setImageCalls: [SetImageCall] { setCalls.withLock { $0 } }
    /// Every URL passed to `downloadImage`, in order.
    public var downloadedURLs: [URL] { downloads.withLock { $0 } }
    /// Every URL passed to `image(from:)`, in order.
    public var loadedURLs: [URL] { loads.withLock { $0 } }
    /// The lines ``ImageClient`` would log, one per failed `setImage`.
    public var loggedFailures: [String] { failures.withLock { $0 } }

    public func image(from url: URL) async throws -> Image {
        loads.withLock { $0.append(url) }
        return try await client.image(from: url)
    }

    @discardableResult
    public func downloadImage(from url: URL, completion: @escaping @Sendable (Result<Image, any Error>) -> Void) -> (any Cancellable)? {
        downloads.withLock { $0.append(url) }
        return client.downloadImage(from: url, completion: completion)
    }

    @discardableResult
    public func setImage(on target: any ImageTarget, from url: URL?, placeholder: Image?) -> ImageDisplayTask {
        setCalls.withLock { $0.append(SetImageCall(target: target, url: url, placeholder: placeholder)) }
        return client.setImage(on: target, from: url, placeholder: placeholder)
    }

    public func displayTask(for target: any ImageTarget) -> ImageDisplayTask? {
        client.displayTask(for: target)
    }
}
