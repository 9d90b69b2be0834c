import Foundation
import Imago
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct HTTPCachePolicyTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let url = URL(string: "https://a.example/cat.png")!

    private func response(_ headers: [String: String], status: Int = 200) -> HTTPURLResponse {
        HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
    }

    @Test func noStoreIsNotStored() {
        #expect(HTTPCachePolicy.entry(for: response(["Cache-Control": "public, no-store"]), data: Data(), now: now) == nil)
        #expect(HTTPCachePolicy.entry(for: response(["Cache-Control": "NO-STORE"]), data: Data(), now: now) == nil)
    }

    @Test func maxAgeSetsTheFreshness() throws {
        let entry = try #require(HTTPCachePolicy.entry(for: response(["Cache-Control": "public, max-age=600", "ETag": "\"abc\""]), data: Data([1]), now: now))
        #expect(entry.expiresAt == now.addingTimeInterval(600))
        #expect(entry.isFresh(at: now.addingTimeInterval(599)))
        #expect(!entry.isFresh(at: now.addingTimeInterval(600)))
        #expect(entry.etag == "\"abc\"")
        #expect(entry.canRevalidate)
    }

    @Test func sharedMaxAgeWinsAndNoCacheIsStaleAtOnce() throws {
        let shared = try #require(HTTPCachePolicy.entry(for: response(["Cache-Control": "max-age=10, s-maxage=100"]), data: Data(), now: now))
        #expect(shared.expiresAt == now.addingTimeInterval(100))
        let noCache = try #require(HTTPCachePolicy.entry(for: response(["Cache-Control": "no-cache", "ETag": "x"]), data: Data(), now: now))
        #expect(!noCache.isFresh(at: now))
    }

    @Test func expiresIsMeasuredFromTheServersDate() throws {
        let entry = try #require(HTTPCachePolicy.entry(for: response([
            "Date": "Sun, 01 Nov 2026 10:00:00 GMT",
            "Expires": "Sun, 01 Nov 2026 11:00:00 GMT",
        ]), data: Data(), now: now))
        #expect(entry.expiresAt == now.addingTimeInterval(3_600))
    }

    @Test func withoutFreshnessHeadersLastModifiedGivesATenthOfItsAge() throws {
        let modified = now.addingTimeInterval(-100_000)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let entry = try #require(HTTPCachePolicy.entry(for: response(["Last-Modified": formatter.string(from: modified)]), data: Data(), now: now))
        #expect(abs(entry.expiresAt.timeIntervalSince(now) - 10_000) < 1)
        let bare = try #require(HTTPCachePolicy.entry(for: response([:]), data: Data(), now: now))
        #expect(!bare.isFresh(at: now))
        #expect(!bare.canRevalidate)
    }

    @Test func conditionalRequestCarriesTheValidators() {
        let entry = DataCacheEntry(data: Data(), etag: "\"v2\"", lastModified: "Tue, 01 Sep 2026 10:00:00 GMT", storedAt: now, expiresAt: now)
        let request = HTTPCachePolicy.conditionalRequest(URLRequest(url: url), for: entry)
        #expect(request.value(forHTTPHeaderField: "If-None-Match") == "\"v2\"")
        #expect(request.value(forHTTPHeaderField: "If-Modified-Since") == "Tue, 01 Sep 2026 10:00:00 GMT")
    }

    @Test func notModifiedRefreshesFreshnessAndKeepsTheBytes() throws {
        let old = DataCacheEntry(data: Data([9, 9]), contentType: "image/png", etag: "\"v1\"", storedAt: now.addingTimeInterval(-1_000), expiresAt: now.addingTimeInterval(-1))
        let refreshed = try #require(HTTPCachePolicy.refreshed(old, with: response(["Cache-Control": "max-age=60"], status: 304), now: now))
        #expect(refreshed.data == Data([9, 9]))
        #expect(refreshed.etag == "\"v1\"")
        #expect(refreshed.contentType == "image/png")
        #expect(refreshed.isFresh(at: now.addingTimeInterval(30)))
    }
}
