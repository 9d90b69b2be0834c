#if Server
import Foundation
import Imago

/// A ``ResultStore`` in a folder (`--result-store file:///DIR`): one file per
/// result, named by the SHA-256 of its key, written to a temporary file and
/// renamed into place, so a reader sees a whole object or none. A file is a
/// header line (`imago-result 1`, the content type, the entity tag and the
/// time it was stored) followed by the bytes; a file that does not parse is
/// a miss. Temporary files a crashed writer left behind are deleted when a
/// store is created, once an hour old (a live writer renames its file
/// within moments, so replicas sharing the folder never lose one).
public struct FileResultStore: ResultStore {
    /// The folder.
    public let directory: URL

    /// A store in `directory`, made when missing; temporary files older
    /// than an hour in it are deleted.
    public init(directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.directory = directory
        removeAbandonedFiles(olderThan: Date().addingTimeInterval(-3600))
    }

    /// Deletes the temporary files (`.NAME.UUID`) last written before `date`.
    func removeAbandonedFiles(olderThan date: Date) {
        let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.contentModificationDateKey])
        while let file = files?.nextObject() as? URL {
            guard file.lastPathComponent.hasPrefix("."),
                  let modified = try? file.resourceValues(forKeys: [.contentModificationDateKey]).contentModificationDate,
                  modified < date else { continue }
            try? FileManager.default.removeItem(at: file)
        }
    }

    private func file(for key: String) -> URL {
        let name = Self.objectName(for: key)
        return directory.appendingPathComponent(String(name.prefix(2))).appendingPathComponent(name)
    }

    public func result(for key: String) async throws -> StoredResult? {
        let url = file(for: key)
        guard let contents = try? Data(contentsOf: url) else { return nil }
        guard let newline = contents.firstIndex(of: 0x0A) else { return nil }
        let header = String(decoding: contents[contents.startIndex..<newline], as: UTF8.self).split(separator: " ")
        // A seventh field, the source's caching headers, is there when it had any.
        guard header.count == 6 || header.count == 7, header[0] == "imago-result", header[1] == "1", let stored = Double(header[4]),
              let length = Int(header[5]), contents.count - (newline + 1 - contents.startIndex) == length else { return nil }
        return StoredResult(data: Data(contents[(newline + 1)...]), contentType: String(header[2]), etag: String(header[3]),
                            storedAt: Date(timeIntervalSince1970: stored),
                            sourceCacheHeaders: SourceCacheHeaders(storedForm: header.count == 7 ? String(header[6]) : ""))
    }

    public func store(_ result: StoredResult, for key: String) async throws {
        let url = file(for: key)
        let folder = url.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let cacheHeaders = result.sourceCacheHeaders.storedForm
        let header = "imago-result 1 \(result.contentType) \(result.etag) \(result.storedAt.timeIntervalSince1970) \(result.data.count)"
            + (cacheHeaders.isEmpty ? "" : " " + cacheHeaders) + "\n"
        let temporary = folder.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString)")
        do {
            try (Data(header.utf8) + result.data).write(to: temporary)
            // rename(2) replaces the target in one step.
            guard rename(temporary.path, url.path) == 0 else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
            }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
    }
}
#endif
