import Foundation

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
    /// When the entry was stored.
    public var storedAt: Date
    /// When the entry goes stale; at or before ``storedAt`` means it must be
    /// revalidated before every use.
    public var expiresAt: Date

    /// Creates an entry.
    public init(data: Data, contentType: String? = nil, etag: String? = nil, lastModified: String? = nil, storedAt: Date, expiresAt: Date) {
        self.data = data
        self.contentType = contentType
        self.etag = etag
        self.lastModified = lastModified
        self.storedAt = storedAt
        self.expiresAt = expiresAt
    }

    /// Whether the entry may be used without asking the server.
    public func isFresh(at now: Date) -> Bool { now < expiresAt }

    /// Whether the server can be asked if the entry is still current.
    public var canRevalidate: Bool { etag != nil || lastModified != nil }
}
