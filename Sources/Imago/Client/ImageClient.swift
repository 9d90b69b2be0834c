import Foundation

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
public final class ImageClient: ImageService {
    /// The pipeline that loads, caches and decodes.
    public let pipeline: ImagePipeline
    /// Where completions and displays run; `nil` runs them directly.
    public let responseQueue: (any Dispatching)?
    /// Receives a line for every failed ``setImage(on:from:placeholder:)``.
    public let log: @Sendable (String) -> Void

    /// The task currently loading for each target.
    private let tracked = Locked<[ObjectIdentifier: Tracked]>([:])

    private struct Tracked {
        let id: UInt64
        let task: any Cancellable
    }

    private let nextID = Locked<UInt64>(0)

    /// Creates a client; everything it uses can be injected.
    ///
    /// - Parameters:
    ///   - pipeline: The pipeline; `ImagoCodecs` provides ``ImagePipeline/shared``.
    ///   - responseQueue: Where completions run. Default: `DispatchQueue.main`.
    ///   - log: Where failures of `setImage` are reported. Default: standard error.
    public init(
        pipeline: ImagePipeline,
        responseQueue: (any Dispatching)? = DispatchQueue.main,
        log: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data(("imago: " + $0 + "\n").utf8)) }
    ) {
        self.pipeline = pipeline
        self.responseQueue = responseQueue
        self.log = log
    }

    public func image(from url: URL) async throws -> Image {
        try await pipeline.image(for: ImageRequest(url: url)).image
    }

    @discardableResult
    public func downloadImage(from url: URL, completion: @escaping @Sendable (Result<Image, any Error>) -> Void) -> (any Cancellable)? {
        let request = ImageRequest(url: url)
        if let image = pipeline.cachedImage(for: request) {
            completion(.success(image))
            return nil
        }
        let task = pipeline.imageTask(for: request)
        Task { [responseQueue] in
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

    public func setImage(on target: any ImageTarget, from url: URL?, placeholder: Image?) {
        let key = ObjectIdentifier(target)
        let previous = tracked.withLock { $0.removeValue(forKey: key) }
        previous?.task.cancel()
        guard let url else {
            target.display(placeholder)
            return
        }
        if let image = pipeline.cachedImage(for: ImageRequest(url: url)) {
            target.display(image)
            return
        }
        target.display(placeholder)
        let id = nextID.withLock { id in
            id += 1
            return id
        }
        // Tracked before the load starts, so even an immediate completion finds it.
        let box = CancellableBox()
        tracked.withLock { $0[key] = Tracked(id: id, task: box) }
        // The completion checks it is still the tracked task before showing
        // anything, so a reused target never shows an old image.
        let task = downloadImage(from: url) { [weak self, weak target] result in
            guard let self else { return }
            let current = self.tracked.withLock { tracked -> Bool in
                guard tracked[key]?.id == id else { return false }
                tracked[key] = nil
                return true
            }
            guard current else { return }
            switch result {
            case .success(let image):
                target?.display(image)
            case .failure(let error):
                if !(error is CancellationError) { self.log("\(url.absoluteString): \(error)") }
            }
        }
        if let task { box.set(task) }
    }

    /// How many targets have a load in flight.
    @_spi(Testing) public var trackedTargetCount: Int { tracked.withLock { $0.count } }

}

/// A cancellable filled in after it is handed out; a cancel that comes
/// first is passed on as soon as the real task arrives.
final class CancellableBox: Cancellable {
    private let state = Locked<(task: (any Cancellable)?, cancelled: Bool)>((nil, false))

    func set(_ task: any Cancellable) {
        let cancelled = state.withLock { state in
            state.task = task
            return state.cancelled
        }
        if cancelled { task.cancel() }
    }

    func cancel() {
        let task = state.withLock { state in
            state.cancelled = true
            return state.task
        }
        task?.cancel()
    }
}
