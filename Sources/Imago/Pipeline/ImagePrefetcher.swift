import Foundation

/// Loads images ahead of need, at low priority, so they are cached when
/// asked for: for the rows about to scroll into view.
///
/// ```swift
/// let prefetcher = ImagePrefetcher(pipeline: pipeline)
/// prefetcher.startPrefetching(upcoming.map { ImageRequest(url: $0) })
/// prefetcher.stopPrefetching(scrolledAway.map { ImageRequest(url: $0) })
/// ```
///
/// A prefetch shares work with any real request for the same image; a real
/// request raises the shared work to its own priority, and stopping the
/// prefetch never cancels work a real request still wants.
public final class ImagePrefetcher: Sendable {
    /// How far a prefetch goes.
    public enum Destination: Sendable {
        /// Download, decode and process into the memory cache.
        case memoryCache
        /// Download into the disk cache only (cheaper; decoded when needed).
        case diskCache
    }

    /// The pipeline used.
    public let pipeline: ImagePipeline
    /// How far each prefetch goes.
    public let destination: Destination
    /// The priority prefetches run at. Default: ``ImageRequest/Priority/low``.
    public let priority: ImageRequest.Priority

    private struct Entry {
        let id: UInt64
        var task: Task<Void, Never>?
    }

    /// What a prefetch is known by: its final image, or for the disk-cache
    /// destination its download.
    private enum Key: Hashable {
        case image(ImageCacheKey)
        case data(DataIdentity)
    }

    private let tasks = Locked<(entries: [Key: Entry], nextID: UInt64)>(([:], 0))

    /// Creates a prefetcher.
    public init(pipeline: ImagePipeline, destination: Destination = .memoryCache, priority: ImageRequest.Priority = .low) {
        self.pipeline = pipeline
        self.destination = destination
        self.priority = priority
    }

    /// Starts prefetching each request not already cached or in progress.
    public func startPrefetching(_ requests: [ImageRequest]) {
        for var request in requests {
            request.priority = priority
            guard let key = key(for: request) else { continue }
            if destination == .memoryCache, pipeline.cachedImage(for: request) != nil { continue }
            // Reserve the key first; the task fills its entry in once it exists.
            let id = tasks.withLock { tasks -> UInt64? in
                guard tasks.entries[key] == nil else { return nil }
                tasks.nextID += 1
                tasks.entries[key] = Entry(id: tasks.nextID)
                return tasks.nextID
            }
            guard let id else { continue }
            let prefetch = request
            let task = Task { [weak self, pipeline, destination] in
                switch destination {
                case .memoryCache: _ = try? await pipeline.image(for: prefetch)
                case .diskCache: _ = try? await pipeline.prefetchData(for: prefetch)
                }
                self?.finished(key, id: id)
            }
            let cancelled = tasks.withLock { tasks -> Bool in
                guard tasks.entries[key]?.id == id else { return true }   // stopped meanwhile
                tasks.entries[key]?.task = task
                return false
            }
            if cancelled { task.cancel() }
        }
    }

    private func finished(_ key: Key, id: UInt64) {
        tasks.withLock { tasks in
            if tasks.entries[key]?.id == id { tasks.entries[key] = nil }
        }
    }

    /// Stops prefetching these requests (work others still want continues).
    public func stopPrefetching(_ requests: [ImageRequest]) {
        let keys = requests.compactMap(key(for:))
        let stopped = tasks.withLock { tasks in keys.compactMap { tasks.entries.removeValue(forKey: $0)?.task } }
        stopped.forEach { $0.cancel() }
    }

    /// Stops every prefetch.
    public func stopAll() {
        let stopped = tasks.withLock { tasks in
            defer { tasks.entries.removeAll() }
            return tasks.entries.values.compactMap(\.task)
        }
        stopped.forEach { $0.cancel() }
    }

    /// How many prefetches are in flight.
    @_spi(Testing) public var activeCount: Int { tasks.withLock { $0.entries.count } }

    private func key(for request: ImageRequest) -> Key? {
        guard let identified = pipeline.identify(request) else { return nil }
        return destination == .memoryCache ? .image(identified.cacheKey) : .data(identified.data)
    }
}

extension ImagePipeline {
    /// Runs only the data stage (disk cache, network, validation, storing),
    /// sharing it with any request for the same ``DataIdentity`` (URL and
    /// credentials, or image ID, and cache policy).
    func prefetchData(for request: ImageRequest) async throws {
        guard let identified = identify(request) else { throw ImagePipelineError(.invalidRequest, url: nil) }
        _ = try await dataStage.data(for: identified, subscription: JobSubscription(priority: request.priority))
    }
}
