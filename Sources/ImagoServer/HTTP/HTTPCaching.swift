#if Server
import Foundation
import Imago

/// How the server's answers are cached and revalidated, as imgproxy does
/// it: the `ETag` and `Last-Modified` are the source's (so a cache in front
/// revalidates against the source, and a 304 costs no render), a client's
/// `If-None-Match` and `If-Modified-Since` go to the source, and
/// `Cache-Control` comes from the URL's `expires`, the source's own headers
/// (with ``passesSourceCacheControl``) or the time to live.
///
/// ```swift
/// configuration.caching.etagBuster = "2026-11"          // every ETag changes at once
/// configuration.caching.passesSourceCacheControl = true
/// ```
public struct HTTPCaching: Sendable, Hashable {
    /// Whether answers carry an `ETag` and `If-None-Match` is honoured
    /// (imgproxy's `IMGPROXY_ETAG_ENABLED`; v3's `IMGPROXY_USE_ETAG`).
    /// The tag is the source's; for a source that sends none, see
    /// ``hashesUntaggedAnswers``. Default: `true`.
    public var sendsETag: Bool
    /// Whether an answer whose source sent no `ETag` is tagged with the
    /// SHA-256 of its bytes (so it can still be revalidated, once rendered);
    /// imgproxy sends no tag then (`IMAGO_ETAG_HASH=false`). Default: `true`.
    public var hashesUntaggedAnswers: Bool
    /// A prefix that changes every `ETag` (`"BUSTER/base64url(source tag)"`),
    /// so caches drop what they hold after a change of configuration
    /// (`IMGPROXY_ETAG_BUSTER`). Default: none.
    public var etagBuster: String?
    /// Whether answers carry the source's `Last-Modified` and
    /// `If-Modified-Since` is honoured (`IMGPROXY_LAST_MODIFIED_ENABLED`;
    /// v3's `IMGPROXY_USE_LAST_MODIFIED`). Default: `true`.
    public var sendsLastModified: Bool
    /// A time no `Last-Modified` is earlier than: older ones are sent as
    /// this one, and an `If-Modified-Since` before it is not honoured
    /// (`IMGPROXY_LAST_MODIFIED_BUSTER`). Default: none.
    public var lastModifiedBuster: Date?
    /// Whether the source's `Cache-Control` (or its `Expires`, as a
    /// `max-age`) is sent instead of the time to live
    /// (`IMGPROXY_CACHE_CONTROL_PASSTHROUGH`). Default: `false`.
    public var passesSourceCacheControl: Bool
    /// The `Cache-Control` of error answers; `nil`: none, as imgproxy.
    /// Default: `no-store`, so that no cache in front keeps a failure
    /// (`IMAGO_ERROR_CACHE_CONTROL`; empty for imgproxy's behaviour).
    public var errorCacheControl: String?

    /// Creates the defaults above.
    public init() {
        sendsETag = true
        hashesUntaggedAnswers = true
        etagBuster = nil
        sendsLastModified = true
        lastModifiedBuster = nil
        passesSourceCacheControl = false
        errorCacheControl = "no-store"
    }

    /// The answer's `ETag`: the source's (behind the buster when there is
    /// one), else `bytesTag` when untagged answers are hashed; `nil` when tags are off.
    func etag(source: SourceCacheHeaders, bytesTag: String) -> String? {
        guard sendsETag else { return nil }
        guard let tag = source.etag, !tag.isEmpty else { return hashesUntaggedAnswers ? bytesTag : nil }
        guard let etagBuster else { return tag }
        return "\"\(etagBuster)/\(SigningKey.base64URL(Data(tag.utf8)))\""
    }

    /// The answer's `Last-Modified`: the source's when it parses, no
    /// earlier than the buster; `nil` when off or unknown.
    func lastModified(source: SourceCacheHeaders) -> String? {
        guard sendsLastModified, let date = source.lastModified.flatMap(HTTPDate.parse) else { return nil }
        if let lastModifiedBuster, date < lastModifiedBuster { return HTTPDate.format(lastModifiedBuster) }
        return HTTPDate.format(date)
    }

    /// The `Cache-Control` of a successful answer, imgproxy's rules in
    /// order: the URL's `expires` when it leaves a positive age (at most the
    /// time to live); the source's own headers when passed on; the time to
    /// live; else `no-cache` (a time to live of 0).
    func cacheControl(timeToLive: Int, expires: Int?, source: SourceCacheHeaders, now: Date = Date()) -> String {
        if let expires {
            let left = Int((Double(expires) - now.timeIntervalSince1970).rounded(.down))
            let age = min(timeToLive, max(0, left))
            if age > 0 { return "max-age=\(age), public" }
        }
        if passesSourceCacheControl {
            if let given = source.cacheControl, !given.isEmpty { return given }
            if let date = source.expires.flatMap(HTTPDate.parse) {
                let left = Int(date.timeIntervalSince(now).rounded(.down))
                if left > 0 { return "max-age=\(left), public" }
            }
        }
        return timeToLive > 0 ? "max-age=\(timeToLive), public" : "no-cache"
    }

    /// The `Cache-Control` of a ``FallbackImage`` answer, imgproxy's rules:
    /// the fallback's own time to live when it has one, shortened to the
    /// URL's `expires` (at most the server's time to live); without one,
    /// an error status gets ``errorCacheControl`` and a success the usual
    /// time to live (the failed source's headers are not passed on).
    func fallbackCacheControl(timeToLive: Int, fallbackTimeToLive: Int?, expires: Int?, status: Int, now: Date = Date()) -> String? {
        var age = fallbackTimeToLive.flatMap { $0 > 0 ? $0 : nil }
        if let expires {
            let left = max(0, Int((Double(expires) - now.timeIntervalSince1970).rounded(.down)))
            if age == nil || left < age! { age = min(timeToLive, left) }
        }
        if let age, age > 0 { return "max-age=\(age), public" }
        if status >= 400 { return errorCacheControl }
        return timeToLive > 0 ? "max-age=\(timeToLive), public" : "no-cache"
    }

    /// The conditional headers to send the source for a client's: its
    /// `If-None-Match` (out from behind the buster) and `If-Modified-Since`
    /// (only one after the buster); none when a buster's prefix is missing.
    func conditionalHeaders(ifNoneMatch: String?, ifModifiedSince: String?) -> [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = []
        // The server's own tags (a hash of an answer whose source sent no tag) mean nothing to the source.
        let sourceTags = (ifNoneMatch ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.hasPrefix("\"" + RenderedImage.hashTagPrefix) && !$0.hasPrefix("W/\"" + RenderedImage.hashTagPrefix) }
        let ifNoneMatch = sourceTags.isEmpty ? nil : sourceTags.joined(separator: ", ")
        if sendsETag, let ifNoneMatch, !ifNoneMatch.isEmpty {
            if let etagBuster {
                var tag = Substring(ifNoneMatch.trimmingCharacters(in: .whitespaces))
                if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
                tag = tag.drop { $0 == "\"" }
                while tag.last == "\"" { tag = tag.dropLast() }
                guard tag.hasPrefix(etagBuster + "/"),
                      let inner = SigningKey.data(base64URL: tag.dropFirst(etagBuster.count + 1)) else { return [] }
                headers.append(("If-None-Match", String(decoding: inner, as: UTF8.self)))
            } else {
                headers.append(("If-None-Match", ifNoneMatch))
            }
        }
        if sendsLastModified, let ifModifiedSince, !ifModifiedSince.isEmpty {
            if let lastModifiedBuster {
                if let date = HTTPDate.parse(ifModifiedSince), date > lastModifiedBuster { headers.append(("If-Modified-Since", ifModifiedSince)) }
            } else {
                headers.append(("If-Modified-Since", ifModifiedSince))
            }
        }
        return headers
    }

    /// Whether a client holding `ifNoneMatch` or `ifModifiedSince` has the
    /// answer whose tag is `etag` and date `lastModified` (an
    /// `If-None-Match` decides alone when there is one, RFC 9110).
    func isNotModified(ifNoneMatch: String?, ifModifiedSince: String?, etag: String?, lastModified: String?) -> Bool {
        if let ifNoneMatch, !ifNoneMatch.isEmpty {
            guard let etag else { return false }
            return EntityTag.matches(ifNoneMatch, etag: etag)
        }
        guard let since = ifModifiedSince.flatMap(HTTPDate.parse), let modified = lastModified.flatMap(HTTPDate.parse) else { return false }
        return modified <= since
    }
}

#endif
