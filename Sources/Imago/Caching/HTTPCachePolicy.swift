import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// HTTP caching rules (RFC 9111), as far as a private image cache needs them.
public enum HTTPCachePolicy {
    /// The entry to store for a 2xx response, or `nil` when the response
    /// forbids storing (`Cache-Control: no-store`).
    ///
    /// Freshness comes from `Cache-Control: max-age` (or `s-maxage`), else
    /// `Expires` against `Date`; `no-cache` makes the entry stale at once.
    /// With neither, a heuristic applies: a tenth of the time since
    /// `Last-Modified`, at most a day; no `Last-Modified`, stale at once.
    public static func entry(for response: HTTPURLResponse, data: Data, now: Date) -> DataCacheEntry? {
        let cacheControl = directives(response.value(forHTTPHeaderField: "Cache-Control"))
        if cacheControl["no-store"] != nil { return nil }
        let lastModified = response.value(forHTTPHeaderField: "Last-Modified")
        let lifetime: TimeInterval
        if cacheControl["no-cache"] != nil {
            lifetime = 0
        } else if let maxAge = (cacheControl["s-maxage"] ?? cacheControl["max-age"]).flatMap({ $0.flatMap(TimeInterval.init) }) {
            lifetime = max(0, maxAge)
        } else if let expires = response.value(forHTTPHeaderField: "Expires").flatMap(httpDate) {
            let served = response.value(forHTTPHeaderField: "Date").flatMap(httpDate) ?? now
            lifetime = max(0, expires.timeIntervalSince(served))
        } else if let modified = lastModified.flatMap(httpDate) {
            lifetime = min(max(0, now.timeIntervalSince(modified)) / 10, 86_400)
        } else {
            lifetime = 0
        }
        return DataCacheEntry(
            data: data,
            contentType: response.value(forHTTPHeaderField: "Content-Type"),
            etag: response.value(forHTTPHeaderField: "ETag"),
            lastModified: lastModified,
            cacheControl: response.value(forHTTPHeaderField: "Cache-Control"),
            expires: response.value(forHTTPHeaderField: "Expires"),
            storedAt: now,
            expiresAt: now.addingTimeInterval(lifetime)
        )
    }

    /// `entry` refreshed by a 304 response: new freshness and validators
    /// where the response gives them, the same bytes.
    public static func refreshed(_ entry: DataCacheEntry, with response: HTTPURLResponse, now: Date) -> DataCacheEntry? {
        guard let fresh = Self.entry(for: response, data: entry.data, now: now) else { return nil }
        return DataCacheEntry(
            data: entry.data,
            contentType: entry.contentType,
            etag: fresh.etag ?? entry.etag,
            lastModified: fresh.lastModified ?? entry.lastModified,
            cacheControl: fresh.cacheControl ?? entry.cacheControl,
            expires: fresh.expires ?? entry.expires,
            storedAt: now,
            expiresAt: fresh.expiresAt
        )
    }

    /// Adds `If-None-Match` and `If-Modified-Since` from `entry`'s validators.
    public static func conditionalRequest(_ request: URLRequest, for entry: DataCacheEntry) -> URLRequest {
        var request = request
        if let etag = entry.etag { request.setValue(etag, forHTTPHeaderField: "If-None-Match") }
        if let lastModified = entry.lastModified { request.setValue(lastModified, forHTTPHeaderField: "If-Modified-Since") }
        return request
    }

    /// The directives of a `Cache-Control` value, lower-cased, with their values.
    static func directives(_ value: String?) -> [String: String?] {
        var result: [String: String?] = [:]
        for part in (value ?? "").split(separator: ",") {
            let pieces = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard let name = pieces.first, !name.isEmpty else { continue }
            result[name.lowercased()] = pieces.count > 1 ? pieces[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) : nil
        }
        return result
    }

    /// Parses an HTTP date (IMF-fixdate, and the two obsolete forms).
    package static func httpDate(_ text: String) -> Date? {
        HTTPDate.parse(text)
    }

    /// Parses an HTTP date with the formatters: the obsolete forms, which
    /// ``HTTPDate`` does not read by hand.
    static func formattedDate(_ text: String) -> Date? {
        dateFormatters.withLock { formatters in
            formatters.lazy.compactMap { $0.date(from: text) }.first
        }
    }

    /// Creating a `DateFormatter` costs far more than parsing with one, and
    /// this runs for every cached response: the three are made once, and
    /// used under a lock because `DateFormatter` is not thread-safe.
    private static let dateFormatters = Locked(
        ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"].map { format in
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            return formatter
        }
    )
}
