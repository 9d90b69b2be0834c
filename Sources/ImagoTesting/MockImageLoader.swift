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
public final class MockImageLoader: ImageLoading {
    /// The error for a URL with no stub.
    public struct Unstubbed: Error, Sendable, Equatable {
        /// The URL that had no stub.
        public let url: URL
    }

    private let stubs = Locked<[URL: Result<Image, any Error>]>([:])
    private let requested = Locked<[URL]>([])

    /// Creates a loader with no stubs.
    public init() {}

    /// Sets the answer for `url`.
    public func stub(_ url: URL, _ result: Result<Image, any Error>) {
        stubs.withLock { $0[url] = result }
    }

    /// Every URL asked for, in order.
    public var requests: [URL] { requested.withLock { $0 } }

    public func image(from url: URL) async throws -> Image {
        requested.withLock { $0.append(url) }
        guard let result = stubs.withLock({ $0[url] }) else { throw Unstubbed(url: url) }
        return try result.get()
    }
}

/// An ``ImageService`` that records every call and answers from stubs,
/// delivering completions at once (or when the test says, with a queue).
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

    private let loader = MockImageLoader()
    private let setCalls = Locked<[SetImageCall]>([])
    private let downloads = Locked<[URL]>([])
    private let queue: (any Dispatching)?

    /// Creates a service; completions and displays run on `queue`, or at once when `nil`.
    public init(queue: (any Dispatching)? = nil) {
        self.queue = queue
    }

    /// Sets the answer for `url`.
    public func stub(_ url: URL, _ result: Result<Image, any Error>) {
        loader.stub(url, result)
    }

    /// Every `setImage` call, in order.
    public var setImageCalls: [SetImageCall] { setCalls.withLock { $0 } }
    /// Every URL passed to `downloadImage`, in order.
    public var downloadedURLs: [URL] { downloads.withLock { $0 } }
    /// Every URL passed to `image(from:)`, in order.
    public var loadedURLs: [URL] { loader.requests }

    public func image(from url: URL) async throws -> Image {
        try await loader.image(from: url)
    }

    @discardableResult
    public func downloadImage(from url: URL, completion: @escaping @Sendable (Result<Image, any Error>) -> Void) -> (any Cancellable)? {
        downloads.withLock { $0.append(url) }
        let loader = self.loader
        let task = Task {
            let result: Result<Image, any Error>
            do { result = .success(try await loader.image(from: url)) } catch { result = .failure(error) }
            if let queue { queue.dispatch { completion(result) } } else { completion(result) }
        }
        return TaskCancellable(task: task)
    }

    public func setImage(on target: any ImageTarget, from url: URL?, placeholder: Image?) {
        setCalls.withLock { $0.append(SetImageCall(target: target, url: url, placeholder: placeholder)) }
        target.display(placeholder)
        guard let url else { return }
        downloadImage(from: url) { [weak target] result in
            if case .success(let image) = result { target?.display(image) }
        }
    }

    private struct TaskCancellable: Cancellable {
        let task: Task<Void, Never>
        func cancel() { task.cancel() }
    }
}

/// An ``ImageTarget`` that records everything it was asked to show.
public final class RecordingImageTarget: ImageTarget {
    private let shown = Locked<[Image?]>([])

    /// Creates a target that has shown nothing.
    public init() {}

    /// Everything displayed, in order (`nil` for "nothing").
    public var displayed: [Image?] { shown.withLock { $0 } }
    /// What the target shows now.
    public var current: Image? { shown.withLock { $0.last ?? nil } }

    public func display(_ image: Image?) {
        shown.withLock { $0.append(image) }
    }
}
