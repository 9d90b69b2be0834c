#if Server
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension SourcePolicy {
    /// The file a `local:///PATH` source names: `PATH` under ``localRoot``,
    /// with every symbolic link resolved.
    ///
    /// - Throws: ``ImageServerError``: `forbiddenSource` when local sources
    ///   are off, for a host (`local://HOST/...`), an empty, `.` or `..`
    ///   component (percent-encoded or not), a NUL, or a path whose real
    ///   location (symbolic links followed) is outside the root;
    ///   `sourceNotFound` when there is no such file.
    public func localFile(for url: URL) throws(ImageServerError) -> URL {
        guard let root = localRoot else {
            throw ImageServerError(.forbiddenSource, "local sources are off: the server has no local root (--local-root)")
        }
        guard url.host?.isEmpty ?? true else {
            throw ImageServerError(.forbiddenSource, "a local source is local:///PATH, with no host")
        }
        // The path as sent, percent-decoded once; no component may step anywhere.
        let encoded = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? url.path
        guard let path = encoded.removingPercentEncoding, path.hasPrefix("/"), !path.contains("\0") else {
            throw ImageServerError(.forbiddenSource, "the local path is malformed")
        }
        let components = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        guard !components.isEmpty, components.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }) else {
            throw ImageServerError(.forbiddenSource, "the local path \(path.prefix(200)) has an empty, . or .. component")
        }
        let realRoot = Self.realPath(root.path) ?? root.standardizedFileURL.path
        guard let real = Self.realPath(realRoot + path) else {
            throw ImageServerError(.sourceNotFound, "no file at local:\(path.prefix(200))")
        }
        guard real.hasPrefix(realRoot.hasSuffix("/") ? realRoot : realRoot + "/") else {
            throw ImageServerError(.forbiddenSource, "the local path \(path.prefix(200)) leads out of the local root")
        }
        return URL(fileURLWithPath: real)
    }

    /// The path with every symbolic link, `.` and `..` resolved; `nil` when it does not exist.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
#endif
