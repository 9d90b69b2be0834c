import Foundation
import Imago
import ImagoTesting
import Testing

/// The disk cache, in a real temporary directory.
@Suite final class DataCacheTests {
    let directory: URL
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// Each test's folder goes with it.
    deinit { try? FileManager.default.removeItem(at: directory) }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("imago-data-cache-\(UUID().uuidString)")
    }

    private func cache(sizeLimit: Int = 1 << 20) -> DataCache {
        DataCache(configuration: .init(directory: directory, sizeLimit: sizeLimit))
    }

    private func entry(_ size: Int, fill: UInt8 = 7, etag: String? = nil) -> DataCacheEntry {
        DataCacheEntry(data: Data(repeating: fill, count: size), contentType: "image/png", etag: etag,
                       lastModified: "Tue, 01 Sep 2026 10:00:00 GMT", storedAt: now, expiresAt: now.addingTimeInterval(60))
    }

    private func files() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }

    @Test func storedEntryReadsBackWithItsMetadata() {
        let cache = cache()
        let stored = entry(1_000, etag: "\"v1\"")
        cache.store(stored, for: "https://a.example/cat.png")
        #expect(cache.entry(for: "https://a.example/cat.png") == stored)
        #expect(cache.entry(for: "https://a.example/dog.png") == nil)
        // A second instance over the same directory sees it too.
        #expect(DataCache(configuration: .init(directory: directory)).entry(for: "https://a.example/cat.png") == stored)
    }

    @Test func fileNamesAreTheSHA256OfTheKey() {
        // FIPS 180-2's example: SHA-256("abc").
        #expect(cache().fileURL(for: "abc").lastPathComponent == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad.entry")
        #expect(cache().fileURL(for: "").lastPathComponent.hasPrefix("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"))
    }

    @Test func writesLeaveNoTemporaryFiles() {
        let cache = cache()
        for index in 0..<10 { cache.store(entry(100 + index), for: "k\(index)") }
        #expect(files().count == 10)
        #expect(files().allSatisfy { $0.hasSuffix(".entry") })
    }

    @Test(arguments: ["truncated", "flipped", "garbage", "empty", "otherKey"])
    func damagedEntryIsAMissAndIsRemoved(damage: String) throws {
        let cache = cache()
        cache.store(entry(5_000), for: "key")
        let url = cache.fileURL(for: "key")
        var bytes = try [UInt8](Data(contentsOf: url))
        switch damage {
        case "truncated": bytes.removeLast(100)
        case "flipped": bytes[bytes.count - 10] ^= 0x40
        case "garbage": bytes = Array("not a cache file".utf8)
        case "empty": bytes = []
        default:
            // A file holding another key (a name collision, or a file copied by hand).
            let other = DataCache(configuration: .init(directory: directory))
            other.store(entry(10), for: "other")
            bytes = try [UInt8](Data(contentsOf: other.fileURL(for: "other")))
        }
        try Data(bytes).write(to: url)
        #expect(cache.entry(for: "key") == nil)
        #expect(!FileManager.default.fileExists(atPath: url.path))
        // The cache still works.
        cache.store(entry(10), for: "key")
        #expect(cache.entry(for: "key") != nil)
    }

    @Test func overTheLimitTheLeastRecentlyUsedAreTrimmedTo70Percent() throws {
        let cache = cache(sizeLimit: 10_000)
        let past = Date().addingTimeInterval(-1_000)
        var index = 0
        // Fill to just under the limit, with distinct modification times, oldest first.
        while cache.totalSize + 1_300 < 10_000 {
            cache.store(entry(1_000), for: "k\(index)")
            try FileManager.default.setAttributes([.modificationDate: past.addingTimeInterval(Double(index))], ofItemAtPath: cache.fileURL(for: "k\(index)").path)
            index += 1
        }
        let before = cache.totalSize
        _ = cache.entry(for: "k0")          // a hit makes k0 the most recent
        cache.store(entry(1_000), for: "new")   // crosses the limit
        #expect(before <= 10_000)
        #expect(cache.totalSize <= 7_000)
        #expect(cache.entry(for: "k0") != nil)
        #expect(cache.entry(for: "k1") == nil)
        #expect(cache.entry(for: "new") != nil)
    }

    @Test func trimRemovesAbandonedTemporaryFiles() throws {
        let cache = cache()
        cache.store(entry(10), for: "k")
        let abandoned = directory.appendingPathComponent(".tmp-crashed-writer")
        try Data(count: 50).write(to: abandoned)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-3_600)], ofItemAtPath: abandoned.path)
        let recent = directory.appendingPathComponent(".tmp-writing-now")
        try Data(count: 50).write(to: recent)
        cache.trim(toSize: 1 << 20)
        #expect(!FileManager.default.fileExists(atPath: abandoned.path))
        #expect(FileManager.default.fileExists(atPath: recent.path))
    }

    @Test func removeEntryAndRemoveAll() {
        let cache = cache()
        cache.store(entry(10), for: "a")
        cache.store(entry(10), for: "b")
        cache.removeEntry(for: "a")
        #expect(cache.entry(for: "a") == nil && cache.entry(for: "b") != nil)
        cache.removeAll()
        #expect(files().isEmpty)
        #expect(cache.totalSize == 0)
    }

    @Test func unwritableDirectoryFailsQuietlyAndLeavesNothing() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("not-a-folder")
        try Data().write(to: file)    // a file where the cache's folder should be
        let cache = DataCache(configuration: .init(directory: file))
        cache.store(entry(10), for: "a")
        #expect(cache.entry(for: "a") == nil)
    }
}
