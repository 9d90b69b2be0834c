import Foundation
import Logging

/// Loads images for app code and display targets, over an ``ImagePipeline``.
///
/// ```swift
/// let client = ImageClient.shared                          // ImagoCodecs
/// client.setImage(on: cell, from: album.artworkURL, placeholder: .placeholder)
/// let image = try await client.image(from: url)
/// ```
///
/// Completions, and displays of images that had to be loaded, run on
/// ``responseQueue`` (`DispatchQueue.main` by default; any ``Dispatching``),
/// or directly when it is `nil`. A memory-cache hit, a placeholder and the
/// clearing for a `nil` URL happen at once, on the caller's thread, so a
/// list cell never flashes its placeholder for an image already in memory.
///
/// A load starts on the caller's thread too, up to its first real wait (the
/// network, the disk on the work queue, a decode on the work queue): with
/// test doubles that answer at once and ``Dispatching`` queues that run work
/// immediately, it has finished before `setImage` or `downloadImage` returns.
public final class ImageClient: ImageService {
    /// The pipeline that loads, caches and decodes.
    public let pipeline: ImagePipeline
    /// Where completions and displays run; `nil` runs them directly.
    public let responseQueue: (any Dispatching)?
    /// Receives a line for every failed ``setImage(on:from:placeholder:)``.
    public let log: @Sendable (String) -> Void

    /// The display in flight for each target.
    private let tracked = Locked<[ObjectIdentifier: Tracked]>([:])

    private struct Tracked {
        let id: UInt64
        let display: ImageDisplayTask
    }

    private let nextID = Locked<UInt64>(0)

    /// Creates a client; everything it uses can be injected.
    ///
    /// - Parameters:
    ///   - pipeline: The pipeline; `ImagoCodecs` provides ``ImagePipeline/shared``.
    ///   - responseQueue: Where completions run. Default: `DispatchQueue.main`.
    ///   - log: Where failures of `setImage` are reported. Default: a
    ///     swift-log `Logger` labelled `imago.client`, at `warning` (where
    ///     the application's logging backend sends it).
    public init(
        pipeline: ImagePipeline,
        responseQueue: (any Dispatching)? = DispatchQueue.main,
        log: @escaping @Sendable (String) -> Void = { Logger(label: "imago.client").warning("\($0)") }
    ) {
        self.pipeline = pipeline
        self.responseQueue = responseQueue
        self.log = log
    }

    public func image(from url: URL) async throws -> Image {
        try await pipeline.image(from: url)
    }

    @discardableResult
    public func downloadImage(from url: URL, completion: @escaping @Sendable (Result<Image, any Error>) -> Void) -> (any Cancellable)? {
        let request = ImageRequest(url: url)
        if let image = pipeline.cachedImage(for: request) {
            completion(.success(image))
            return nil
        }
        let task = pipeline.imageTask(for: request)
        // Starts on the caller's thread: when every stage answers at once
        // and the response queue runs work immediately, `completion` has run
        // before this method returns.
        startImmediately { [responseQueue] in
            let result: Result<Image, any Error>
            do { result = .success(try await task.response.image) } catch { result = .failure(error) }
            if let responseQueue {
                responseQueue.dispatch { completion(result) }
            } else {
                completion(result)
            }
        }
        return task
    }

    @discardableResult
    public func setImage(on target: any ImageTarget, from url: URL?, placeholder: Image?) -> ImageDisplayTask {
        let key = ObjectIdentifier(target)
        let id = nextID.withLock { id in
            id += 1
            return id
        }
        let display = ImageDisplayTask(url: url) { [weak self] in _ = self?.untrack(key, id: id) }
        let previous = tracked.withLock { $0.removeValue(forKey: key) }
        previous?.display.cancel()
        guard let url else {
            target.display(placeholder)
            display.finish(.noURL)
            return display
        }
        if let image = pipeline.cachedImage(for: ImageRequest(url: url)) {
            target.display(image)
            display.finish(.displayed(image))
            return display
        }
        target.display(placeholder)
        // Tracked before the load starts, so even an immediate completion finds it.
        tracked.withLock { $0[key] = Tracked(id: id, display: display) }
        // The completion checks it is still the tracked display before
        // showing anything, so a reused target never shows an old image.
        let task = downloadImage(from: url) { [weak self, weak target, log] result in
            // A client that is gone can no longer replace this display: it
            // is still the current one.
            guard self?.untrack(key, id: id) ?? true else { return }
            switch result {
            case .success(let image):
                guard let target else {
                    display.finish(.cancelled)
                    return
                }
                target.display(image)
                display.finish(.displayed(image))
            case .failure(is CancellationError):
                display.finish(.cancelled)
            case .failure(let error):
                // Imago's errors name their URL already.
                let line = "\(error)"
                log(line.contains(url.absoluteString) ? line : "\(url.absoluteString): \(line)")
                display.finish(.failed(error))
            }
        }
        if let task { display.attach(task) }
        return display
    }

    public func displayTask(for target: any ImageTarget) -> ImageDisplayTask? {
        tracked.withLock { $0[ObjectIdentifier(target)]?.display }
    }

    /// Stops tracking display `id` for `key`; `false` when it was no longer the tracked one.
    private func untrack(_ key: ObjectIdentifier, id: UInt64) -> Bool {
        tracked.withLock { tracked in
            guard tracked[key]?.id == id else { return false }
            tracked[key] = nil
            return true
        }
    }

    /// How many targets have a load in flight.
    @_spi(Testing) public var trackedTargetCount: Int { tracked.withLock { $0.count } }
}
