import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A cache of encoded bytes with their HTTP metadata, usually on disk: the
/// seam for the pipeline's second stage. Implementations are thread-safe.
public protocol DataCaching: Sendable {
    /// The entry stored for `key`, or `nil`. A damaged entry is a miss.
    func entry(for key: String) -> DataCacheEntry?
    /// Stores `entry` for `key`, replacing what was there.
    func store(_ entry: DataCacheEntry, for key: String)
    /// Removes the entry for `key`.
    func removeEntry(for key: String)
    /// Removes every entry.
    func removeAll()
}

/// Bytes in a ``DataCaching`` and what is needed to reuse them under HTTP's
/// rules: when they go stale, and the validators to ask the server whether
/// they are still current.
public struct DataCacheEntry: Sendable, Hashable {
    /// The body.
    public var data: Data
    /// The `Content-Type` the server sent, if any.
    public var contentType: String?
    /// The `ETag` validator, for `If-None-Match`.
    public var etag: String?
    /// The `Last-Modified` validator, for `If-Modified-Since`.
    public var lastModified: String?
    /// The `Cache-Control` the server sent, as it was, for a server that
    /// passes its source's caching on (imgproxy's `IMGPROXY_CACHE_CONTROL_PASSTHROUGH`).
    public var cacheControl: String?
    /// The `Expires` the server sent, as it was.
    public var expires: String?
    /// When the entry was stored.
    public var storedAt: Date
    /// When the entry goes stale; at or before ``storedAt`` means it must be
    /// revalidated before every use.
    public var expiresAt: Date

    /// Creates an entry.
    public init(data: Data, contentType: String? = nil, etag: String? = nil, lastModified: String? = nil,
                cacheControl: String? = nil, expires: String? = nil, storedAt: Date, expiresAt: Date) {
        self.data = data
        self.contentType = contentType
        self.etag = etag
        self.lastModified = lastModified
        self.cacheControl = cacheControl
        self.expires = expires
        self.storedAt = storedAt
        self.expiresAt = expiresAt
    }

    /// Whether the entry may be used without asking the server.
    public func isFresh(at now: Date) -> Bool { now < expiresAt }

    /// Whether the server can be asked if the entry is still current.
    public var canRevalidate: Bool { etag != nil || lastModified != nil }

    /// What the server said about caching the bytes.
    public var cacheHeaders: SourceCacheHeaders {
        SourceCacheHeaders(etag: etag, lastModified: lastModified, cacheControl: cacheControl, expires: expires)
    }
}

/// What a source's response said about caching it, as it said it: its
/// validators and its caching headers. An image server answers with them
/// (`ETag`, `Last-Modified`, and `Cache-Control` passed on), so a cache in
/// front of it revalidates against the source.
public struct SourceCacheHeaders: Sendable, Hashable {
    /// `ETag`.
    public var etag: String?
    /// `Last-Modified`.
    public var lastModified: String?
    /// `Cache-Control`.
    public var cacheControl: String?
    /// `Expires`.
    public var expires: String?

    /// Creates the headers; all are optional.
    public init(etag: String? = nil, lastModified: String? = nil, cacheControl: String? = nil, expires: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
        self.cacheControl = cacheControl
        self.expires = expires
    }

    /// The headers of `response` (none of a response that is not HTTP).
    public init(_ response: URLResponse?) {
        let http = response as? HTTPURLResponse
        self.init(etag: http?.value(forHTTPHeaderField: "ETag"), lastModified: http?.value(forHTTPHeaderField: "Last-Modified"),
                  cacheControl: http?.value(forHTTPHeaderField: "Cache-Control"), expires: http?.value(forHTTPHeaderField: "Expires"))
    }
}
