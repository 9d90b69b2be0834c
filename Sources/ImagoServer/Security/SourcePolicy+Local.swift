#if Server
import CImagoSystem
import Foundation
import Imago
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension SourcePolicy {
    /// The path a `local:///PATH` source names, relative to ``localRoot``
    /// (`sub/b.jpg` for `local:///sub/b.jpg`), judged from the URL alone.
    ///
    /// - Throws: ``ImageServerError``: `forbiddenSource` when local sources
    ///   are off, for a host (`local://HOST/...`), an empty, `.` or `..`
    ///   component (percent-encoded or not), or a NUL.
    public func localPath(for url: URL) throws(ImageServerError) -> String {
        guard localRoot != nil else {
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
        return String(path.dropFirst())
    }

    /// Opens the file a `local:///PATH` source names, beneath ``localRoot``,
    /// read-only and non-blocking (a FIFO does not wait for a writer).
    ///
    /// The kernel resolves the path against the root's descriptor with no
    /// way out, at the moment of the open (`openat2` with `RESOLVE_BENEATH`;
    /// where the kernel lacks it, one `openat` per component with
    /// `O_NOFOLLOW`): a symbolic link that leads out of the root, an
    /// absolute one, or a component swapped for such a link while the
    /// server checks, is refused, never followed. A relative link that
    /// stays beneath the root is followed (not in the component walk,
    /// which follows none). The caller owns the descriptor; only a regular
    /// file should be read from it (``FileDataLoader/load(descriptor:for:)`` checks).
    ///
    /// Blocking system calls: call it off Swift's cooperative threads.
    ///
    /// - Throws: ``ImageServerError``: as ``localPath(for:)``; `forbiddenSource`
    ///   for a path that leads out of the root; `sourceNotFound` when there
    ///   is no such file.
    public func openLocalFile(for url: URL) throws(ImageServerError) -> Int32 {
        let path = try localPath(for: url)
        guard let root = localRoot else { throw ImageServerError(.forbiddenSource, "local sources are off") }
        let rootDescriptor = open(root.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard rootDescriptor >= 0 else {
            throw ImageServerError(.sourceNotFound, "the local root \(root.path) cannot be opened: \(String(cString: strerror(errno)))")
        }
        defer { close(rootDescriptor) }
        let descriptor = imago_open_beneath(rootDescriptor, path, O_RDONLY | O_NONBLOCK)
        guard descriptor < 0 else { return descriptor }
        let code = errno
        let shown = path.prefix(200)
        switch code {
        case ENOENT:
            throw ImageServerError(.sourceNotFound, "no file at local:///\(shown)")
        case EXDEV, ELOOP, EINVAL, ENOTDIR:
            throw ImageServerError(.forbiddenSource, "the local path /\(shown) leads out of the local root or through a link")
        default:
            throw ImageServerError(.forbiddenSource, "local:///\(shown) cannot be opened: \(String(cString: strerror(code)))")
        }
    }
}
#endif
