import Foundation
import Logging

/// The default ``DataCaching``: one file per entry in a directory, with a
/// size limit enforced while running.
///
/// - File names are the SHA-256 of the key, so any key is safe on any file system.
/// - Each file holds a small header (the key, the HTTP metadata, the body's
///   length and checksum) and the body. A file that is truncated, damaged or
///   belongs to another key is a miss and is removed.
/// - Writes go to a temporary file in the same directory, then are renamed
///   into place: readers, including other processes sharing the directory,
///   see the old entry or the new one, never half of one.
/// - When the total size passes ``Configuration/sizeLimit``, the least
///   recently used entries (by modification time, refreshed on every hit)
///   are deleted until the total is at most ``Configuration/trimRatio`` of it.
/// - Temporary files left by a writer that crashed are deleted once ten
///   minutes old, by the next trim or size measurement (every instance
///   measures at its first store).
///
/// File I/O happens on the caller's thread; call it off the main thread.
public final class DataCache: DataCaching {
    private let logger: Logger
    /// Where and how much.
    public struct Configuration: Sendable, Hashable {
        /// The cache directory; created when missing.
        public var directory: URL
        /// The most bytes the entries may take. Default: 256 MB.
        public var sizeLimit: Int
        /// The fraction of the limit a trim brings the cache down to. Default: 0.7.
        public var trimRatio: Double

        /// Creates a configuration.
        public init(directory: URL = DataCache.defaultDirectory, sizeLimit: Int = 256 << 20, trimRatio: Double = 0.7) {
            self.directory = directory
            self.sizeLimit = sizeLimit
            self.trimRatio = trimRatio
        }
    }

    /// `$XDG_CACHE_HOME/imago`, else `~/.cache/imago` (on Apple platforms,
    /// the user's Caches folder).
    public static var defaultDirectory: URL {
        #if os(Linux)
        if let xdg = ProcessInfo.processInfo.environment["XDG_CACHE_HOME"], !xdg.isEmpty {
            return URL(fileURLWithPath: xdg).appendingPathComponent("imago")
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/imago")
        #else
        let caches = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        return caches.appendingPathComponent("imago")
        #endif
    }

    /// The configuration the cache was created with.
    public let configuration: Configuration
    /// The bytes this process believes the directory holds; refreshed by every trim.
    private let size = Locked<Int?>(nil)

    private static let magic = Data("IMAGOCACHE1\n".utf8)
    private static let temporaryPrefix = ".tmp-"
    private static let entrySuffix = ".entry"

    /// Creates a cache over a directory.
    ///
    /// - Parameter logger: Where failed writes are reported (`warning`).
    ///   Default: nowhere.
    public init(configuration: Configuration = Configuration(), logger: Logger = .disabled) {
        self.logger = logger
        self.configuration = configuration
    }

    /// The file that holds `key`.
    public func fileURL(for key: String) -> URL {
        configuration.directory.appendingPathComponent(SHA256.hex(of: Array(key.utf8)) + Self.entrySuffix)
    }

    public func entry(for key: String) -> DataCacheEntry? {
        let url = fileURL(for: key)
        guard let contents = try? Data(contentsOf: url) else { return nil }
        guard let entry = Self.decode(contents, key: key) else {
            try? FileManager.default.removeItem(at: url)
            return nil
        }
        // The modification time is the "last used" time that trimming sorts by.
        try? FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: url.path)
        return entry
    }

    public func store(_ entry: DataCacheEntry, for key: String) {
        let contents = Self.encode(entry, key: key)
        let url = fileURL(for: key)
        let temporary = configuration.directory.appendingPathComponent(Self.temporaryPrefix + UUID().uuidString)
        do {
            try FileManager.default.createDirectory(at: configuration.directory, withIntermediateDirectories: true)
            try contents.write(to: temporary)
            // The "last used" time trimming sorts by, from the clock hits use
            // (`Date`). The file system stamps a new file from a coarser
            // clock, milliseconds behind, so an entry just written could sort
            // before entries read a moment earlier, and be the first one the
            // trim this store may start deletes.
            try? FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: temporary.path)
            if rename(temporary.path, url.path) != 0 {
                throw CocoaError(.fileWriteUnknown)
            }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            logger.warning("disk cache write failed", metadata: ["directory": "\(configuration.directory.path)", "error": "\(error)"])
            return
        }
        let total = size.withLock { size -> Int? in
            guard let current = size else { return nil }
            size = current + contents.count
            return size
        }
        if (total ?? measure()) > configuration.sizeLimit {
            trim(toSize: Int(Double(configuration.sizeLimit) * configuration.trimRatio))
        }
    }

    public func removeEntry(for key: String) {
        try? FileManager.default.removeItem(at: fileURL(for: key))
        size.withLock { $0 = nil }
    }

    public func removeAll() {
        for file in files() { try? FileManager.default.removeItem(at: file.url) }
        size.withLock { $0 = 0 }
    }

    /// The bytes the entries take now, read from the directory.
    public var totalSize: Int { measure() }

    /// Deletes least recently used entries until the entries take at most
    /// `limit` bytes; also removes temporary files abandoned by a crashed
    /// writer more than ten minutes ago.
    public func trim(toSize limit: Int) {
        var files = sweepingAbandoned(files())
        files.sort { $0.modified < $1.modified }
        var total = files.reduce(0) { $0 + $1.size }
        for file in files where total > limit {
            // Another process may have removed it already; the size drops either way.
            try? FileManager.default.removeItem(at: file.url)
            total -= file.size
        }
        size.withLock { $0 = total }
    }

    /// Reads the entries' total size from the directory. Like a trim, it
    /// removes abandoned temporary files: they are outside the size limit,
    /// and a cache that stays under the limit never trims, so without this a
    /// writer killed again and again would leak them without bound. Every
    /// instance measures at its first store.
    private func measure() -> Int {
        let total = sweepingAbandoned(files()).reduce(0) { $0 + $1.size }
        size.withLock { $0 = total }
        return total
    }

    /// Deletes the temporary files among `files` last written more than ten
    /// minutes ago (a live writer's file is younger: it is renamed as soon as
    /// it is written); returns the entries.
    private func sweepingAbandoned(_ files: [File]) -> [File] {
        let stale = Date().addingTimeInterval(-600)
        for file in files where file.isTemporary && file.modified < stale {
            try? FileManager.default.removeItem(at: file.url)
        }
        return files.filter { !$0.isTemporary }
    }

    private struct File {
        let url: URL
        let size: Int
        let modified: Date
        let isTemporary: Bool
    }

    private func files() -> [File] {
        let keys: [URLResourceKey] = [.fileSizeKey, .contentModificationDateKey]
        let urls = (try? FileManager.default.contentsOfDirectory(at: configuration.directory, includingPropertiesForKeys: keys)) ?? []
        return urls.compactMap { url in
            let name = url.lastPathComponent
            let isTemporary = name.hasPrefix(Self.temporaryPrefix)
            guard isTemporary || name.hasSuffix(Self.entrySuffix),
                  let values = try? url.resourceValues(forKeys: Set(keys)) else { return nil }
            return File(url: url, size: values.fileSize ?? 0, modified: values.contentModificationDate ?? .distantPast, isTemporary: isTemporary)
        }
    }

    // MARK: The file format

    /// What precedes the body in a file.
    private struct Header: Codable {
        var key: String
        var length: Int
        var checksum: UInt64
        var contentType: String?
        var etag: String?
        var lastModified: String?
        var cacheControl: String?
        var expires: String?
        var storedAt: Double
        var expiresAt: Double
    }

    /// `magic`, the header's length (4 bytes, little-endian), the header as JSON, the body.
    static func encode(_ entry: DataCacheEntry, key: String) -> Data {
        let header = Header(
            key: key, length: entry.data.count, checksum: Checksum.of(entry.data),
            contentType: entry.contentType, etag: entry.etag, lastModified: entry.lastModified,
            cacheControl: entry.cacheControl, expires: entry.expires,
            storedAt: entry.storedAt.timeIntervalSince1970, expiresAt: entry.expiresAt.timeIntervalSince1970
        )
        let json = (try? JSONEncoder().encode(header)) ?? Data()
        var contents = magic
        withUnsafeBytes(of: UInt32(json.count).littleEndian) { contents.append(contentsOf: $0) }
        contents.append(json)
        contents.append(entry.data)
        return contents
    }

    /// The entry in `contents`, or `nil` when the file is damaged or holds another key.
    static func decode(_ contents: Data, key: String) -> DataCacheEntry? {
        let bytes = contents
        guard bytes.count >= magic.count + 4, bytes.prefix(magic.count) == magic else { return nil }
        let lengthStart = bytes.startIndex + magic.count
        let headerLength = bytes[lengthStart..<lengthStart + 4].enumerated().reduce(0) { $0 | Int($1.element) << ($1.offset * 8) }
        let headerStart = lengthStart + 4
        guard headerLength > 0, headerStart + headerLength <= bytes.endIndex,
              let header = try? JSONDecoder().decode(Header.self, from: bytes[headerStart..<headerStart + headerLength]),
              header.key == key,
              bytes.endIndex - (headerStart + headerLength) == header.length
        else { return nil }
        let body = Data(bytes[(headerStart + headerLength)...])
        guard Checksum.of(body) == header.checksum else { return nil }
        return DataCacheEntry(
            data: body, contentType: header.contentType, etag: header.etag, lastModified: header.lastModified,
            cacheControl: header.cacheControl, expires: header.expires,
            storedAt: Date(timeIntervalSince1970: header.storedAt), expiresAt: Date(timeIntervalSince1970: header.expiresAt)
        )
    }
}
