import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes output files whole or not at all.
///
/// The bytes go to a temporary file in the destination's folder, which is
/// then renamed over the destination with `rename(2)`: a reader sees the old
/// file or the new one, never a part of either, and any failure (a full
/// disk, a read-only folder, a destination that is a folder) leaves the old
/// file exactly as it was. A destination that nobody may write to (no write
/// bit in its mode) is refused rather than silently replaced, as `cp` would.
/// A replaced file keeps its permission bits.
public enum OutputFile {
    /// Writes `data` to `url` atomically.
    ///
    /// - Throws: ``Failure`` with code `output.writeFailed`, naming the path
    ///   and the reason.
    public static func save(_ data: Data, to url: URL) throws {
        let path = url.path
        var mode: mode_t = 0o644
        var existing = stat()
        if lstat(path, &existing) == 0 {
            if (existing.st_mode & S_IFMT) == S_IFDIR {
                throw failure(path, "it is a folder")
            }
            if (existing.st_mode & S_IFMT) == S_IFREG {
                if existing.st_mode & 0o222 == 0 {
                    throw failure(path, "the file is read-only; it was left unchanged")
                }
                mode = existing.st_mode & 0o7777
            }
        }
        let folder = url.deletingLastPathComponent().path
        let temporary = folder + "/.\(url.lastPathComponent).\(UUID().uuidString).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw failure(path, "cannot create a file in \(folder): \(String(cString: strerror(errno)))")
        }
        var written = false
        defer { if !written { unlink(temporary) } }
        do {
            try data.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let count = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                    if count < 0 {
                        if errno == EINTR { continue }
                        throw failure(path, String(cString: strerror(errno)))
                    }
                    offset += count
                }
            }
            guard fchmod(descriptor, mode) == 0, fsync(descriptor) == 0 else {
                throw failure(path, String(cString: strerror(errno)))
            }
        } catch {
            close(descriptor)
            throw error
        }
        guard close(descriptor) == 0 else { throw failure(path, String(cString: strerror(errno))) }
        guard rename(temporary, path) == 0 else {
            let reason = errno == EISDIR ? "it is a folder" : String(cString: strerror(errno))
            throw failure(path, reason)
        }
        written = true
    }

    private static func failure(_ path: String, _ reason: String) -> Failure {
        Failure(code: "output.writeFailed", message: "cannot write \(path): \(reason)")
    }
}
