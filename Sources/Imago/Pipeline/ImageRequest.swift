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

    /// The URLRequest to load. Its URL, with the values of its credential
    /// headers (`Authorization`, `Cookie`, `Proxy-Authorization` and those
    /// the pipeline's configuration adds), identifies the image unless
    /// ``imageID`` is set.
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
    /// The identity of the image when the URL is not: requests with the
    /// same ID share downloads and cache entries whatever their URLs and
    /// credentials (a signed URL that changes every hour, or a private image
    /// that is the same for every user). `nil` (the default): the URL and the
    /// credentials it is loaded with identify the image.
    public var imageID: String?

    /// Creates a request for a URL.
    public init(
        url: URL,
        maximumPixelSize: Int? = nil,
        thumbnail: Thumbnail? = nil,
        processors: [any ImageProcessing] = [],
        priority: Priority = .normal,
        cachePolicy: CachePolicy = .useCaches,
        imageID: String? = nil
    ) {
        self.init(urlRequest: URLRequest(url: url), maximumPixelSize: maximumPixelSize, thumbnail: thumbnail,
                  processors: processors, priority: priority, cachePolicy: cachePolicy, imageID: imageID)
    }

    /// Creates a request from a `URLRequest` (custom headers, timeout).
    public init(
        urlRequest: URLRequest,
        maximumPixelSize: Int? = nil,
        thumbnail: Thumbnail? = nil,
        processors: [any ImageProcessing] = [],
        priority: Priority = .normal,
        cachePolicy: CachePolicy = .useCaches,
        imageID: String? = nil
    ) {
        self.urlRequest = urlRequest
        self.thumbnail = thumbnail ?? maximumPixelSize.map(Thumbnail.init(maximumPixelSize:))
        self.processors = processors
        self.priority = priority
        self.cachePolicy = cachePolicy
        self.imageID = imageID
    }

    /// The URL.
    public var url: URL? { urlRequest.url }

    public var description: String {
        "ImageRequest(\(imageID.map { "id \($0), " } ?? "")\(url?.absoluteString ?? "<no URL>")"
            + (thumbnail.map { ", thumbnail \($0)" } ?? "")
            + (processors.isEmpty ? "" : ", processors \(processors.map(\.identifier))")
            + ", \(cachePolicy), \(priority))"
    }
}
