import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What to load: a URL, how large, how processed, and how urgently.
///
/// ```swift
/// let request = ImageRequest(url: url, maximumPixelSize: 256,
///                            processors: [ImageProcessors.RoundedCorners(radius: 8)],
///                            priority: .high)
/// ```
public struct ImageRequest: Sendable, CustomStringConvertible {
    /// How soon a request should run relative to others.
    public enum Priority: Int, Sendable, Comparable, CaseIterable {
        case veryLow, low, normal, high, veryHigh
        public static func < (lhs: Priority, rhs: Priority) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// Which caches a request may read.
    public enum CachePolicy: Sendable, Hashable {
        /// Memory, then disk (fresh, or revalidated when stale), then the network.
        case useCaches
        /// Skip both caches when reading; still store the result.
        case reloadIgnoringCaches
        /// Memory and disk only, whatever their freshness; never the network.
        case onlyCached
    }

    /// The URLRequest to load (its URL is the identity of the download).
    public var urlRequest: URLRequest
    /// When set, the image is decoded straight to this size (see ``Thumbnail``).
    public var thumbnail: Thumbnail?

    /// Shorthand for a square ``Thumbnail`` that bounds the longer side.
    public var maximumPixelSize: Int? {
        get { ImageDecodingOptions(thumbnail: thumbnail).maximumPixelSize }
        set { thumbnail = newValue.map(Thumbnail.init(maximumPixelSize:)) }
    }
    /// Processors run in order after decoding.
    public var processors: [any ImageProcessing]
    /// The initial priority; change it later through ``ImageTask/setPriority(_:)``.
    public var priority: Priority
    /// Which caches may answer.
    public var cachePolicy: CachePolicy

    /// Creates a request for a URL.
    public init(
        url: URL,
        maximumPixelSize: Int? = nil,
        thumbnail: Thumbnail? = nil,
        processors: [any ImageProcessing] = [],
        priority: Priority = .normal,
        cachePolicy: CachePolicy = .useCaches
    ) {
        self.init(urlRequest: URLRequest(url: url), maximumPixelSize: maximumPixelSize, thumbnail: thumbnail,
                  processors: processors, priority: priority, cachePolicy: cachePolicy)
    }

    /// Creates a request from a `URLRequest` (custom headers, timeout).
    public init(
        urlRequest: URLRequest,
        maximumPixelSize: Int? = nil,
        thumbnail: Thumbnail? = nil,
        processors: [any ImageProcessing] = [],
        priority: Priority = .normal,
        cachePolicy: CachePolicy = .useCaches
    ) {
        self.urlRequest = urlRequest
        self.thumbnail = thumbnail ?? maximumPixelSize.map(Thumbnail.init(maximumPixelSize:))
        self.processors = processors
        self.priority = priority
        self.cachePolicy = cachePolicy
    }

    /// The URL.
    public var url: URL? { urlRequest.url }

    /// The identity of the download: the URL.
    var dataKey: String { urlRequest.url?.absoluteString ?? "" }

    /// The identity of the decoded image: the URL and the thumbnail size.
    var decodeKey: String { dataKey + (thumbnail.map { "#thumbnail=\($0)" } ?? "") }

    /// The identity of the result of the first `count` processors.
    func processingKey(count: Int) -> String {
        processors.prefix(count).reduce(decodeKey) { $0 + "|" + $1.identifier }
    }

    /// The key of the final image in the memory cache.
    public var cacheKey: ImageCacheKey { ImageCacheKey(processingKey(count: processors.count)) }

    public var description: String { "ImageRequest(\(cacheKey), \(priority))" }
}
