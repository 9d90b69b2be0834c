import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Loads `file` URLs from the local file system.
///
/// It reports an `HTTPURLResponse` as a static file server would: status
/// 200, `Content-Length`, `Last-Modified` (the file's modification time),
/// an `ETag` (a SHA-256 of the path, size and modification time, so it
/// changes when the file does), `Accept-Ranges: bytes`, and no content
/// type (the bytes decide the format); a request's single `Range` gets a
/// 206 with `Content-Range`. The body is read in chunks as it is
/// consumed, so a load that is cancelled or dropped stops between chunks.
///
/// Only regular files are read: a directory, a FIFO, a socket or a device
/// (`/dev/zero`, `/dev/stdin`) fails before any byte is read, and opening
/// never waits for a FIFO's writer. At most ``maximumResponseSize`` bytes
/// are read whatever the file's size said when it was opened, so a file
/// that grows while it is read fails too. Opening and reading run on a
/// Dispatch queue of their own, never on Swift's cooperative threads, so
/// a slow disk or network file system cannot stall unrelated tasks.
public struct FileDataLoader: DataLoading {
    /// The largest file the loader reads; larger files fail with
    /// ``DataLoadingError/Code/responseTooLarge`` before any byte is read,
    /// and a file that grows past it fails when it does.
    public var maximumResponseSize: Int
    /// The size of each chunk of the body.
    public var chunkSize: Int

    /// Where files are opened and read: away from the cooperative pool.
    package static let ioQueue = DispatchQueue(label: "imago.file-io", qos: .userInitiated, attributes: .concurrent)

    /// Creates a file loader.
    public init(maximumResponseSize: Int = DataLoader.defaultMaximumResponseSize, chunkSize: Int = 1 << 20) {
        precondition(chunkSize > 0, "chunkSize must be positive")
        self.maximumResponseSize = maximumResponseSize
        self.chunkSize = chunkSize
    }

    /// Opens the file at `request`'s URL and checks it; the body is read as
    /// the returned stream is consumed.
    ///
    /// - Throws: ``DataLoadingError`` with ``DataLoadingError/Code/unsupportedScheme``
    ///   for a URL that is not a `file` URL, ``DataLoadingError/Code/fileUnreadable``
    ///   for a missing file, one that is not a regular file or cannot be
    ///   opened, and ``DataLoadingError/Code/responseTooLarge`` for a file over the limit.
    public func load(_ request: URLRequest) async throws -> DataLoadingResponse {
        guard let url = request.url, url.isFileURL else {
            throw DataLoadingError(.unsupportedScheme, url: request.url, message: "the file loader reads only file URLs")
        }
        let path = url.path
        let descriptor = try await Self.onIOQueue { () throws(DataLoadingError) -> Int32 in
            // Non-blocking, so that a FIFO does not wait for a writer; regular files ignore the flag.
            let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
            guard descriptor >= 0 else {
                let code = errno
                throw DataLoadingError(.fileUnreadable, url: url, message: "the file could not be opened: \(String(cString: strerror(code)))",
                                       underlying: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO))
            }
            return descriptor
        }
        return try await load(descriptor: descriptor, for: url, request: request)
    }

    /// Reads an open file: checks that it is a regular file within the
    /// limit, then returns its body as a stream of chunks. Takes ownership
    /// of `descriptor`: it is closed when the body ends or is dropped, or
    /// at once when this throws.
    ///
    /// For callers that open files their own way, such as beneath a root
    /// directory with no symbolic link leading out.
    ///
    /// - Parameter url: The URL the response carries.
    /// - Parameter request: The request, for its `Range`.
    /// - Throws: ``DataLoadingError`` (``DataLoadingError/Code/fileUnreadable``
    ///   for anything but a regular file, ``DataLoadingError/Code/responseTooLarge``
    ///   for a file over the limit).
    public func load(descriptor: Int32, for url: URL, request: URLRequest? = nil) async throws -> DataLoadingResponse {
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        let limit = maximumResponseSize
        let (size, modified) = try await Self.onIOQueue { () throws(DataLoadingError) -> (Int, timespec) in
            var status = stat()
            guard fstat(descriptor, &status) == 0 else {
                throw DataLoadingError(.fileUnreadable, url: url, message: "the file could not be read: \(String(cString: strerror(errno)))")
            }
            guard status.st_mode & S_IFMT == S_IFREG else {
                let kind = Self.kind(of: status.st_mode)
                throw DataLoadingError(.fileUnreadable, url: url, message: "the path is \(kind), not a regular file")
            }
            #if canImport(Darwin)
            return (Int(status.st_size), status.st_mtimespec)
            #else
            return (Int(status.st_size), status.st_mtim)
            #endif
        }
        guard size <= limit else {
            throw DataLoadingError(.responseTooLarge, url: url, message: "the file has \(size) bytes; the limit is \(limit)")
        }
        var headers = Self.validators(path: url.path, size: size, modified: modified)
        let range = request?.value(forHTTPHeaderField: "Range").flatMap { Self.byteRange($0, size: size) }
        if let range {
            try await Self.onIOQueue { () throws(DataLoadingError) in
                do {
                    try handle.seek(toOffset: UInt64(range.lowerBound))
                } catch {
                    throw DataLoadingError(.fileUnreadable, url: url, message: "seeking in the file failed: \(error.localizedDescription)", underlying: error)
                }
            }
            headers["Content-Range"] = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(size)"
        }
        let length = range?.count ?? size
        headers["Content-Length"] = String(length)
        // A range is read up to its end; the whole file up to the limit (growth past it fails).
        let (end, grows) = range.map { ($0.count, false) } ?? (limit, true)
        let chunkSize = self.chunkSize
        let state = Locked(0)   // bytes read so far
        // The handle closes when the stream is done with it (at the end, or
        // when a consumer that stopped early lets go of the stream).
        let body = AsyncThrowingStream<Data, any Error> {
            let read = state.withLock { $0 }
            guard grows || read < end else {
                try? handle.close()
                return nil
            }
            // One byte past the limit is asked for, so that growth is seen.
            let wanted = min(chunkSize, end - read + (grows ? 1 : 0))
            let chunk = try await Self.onIOQueue { () throws(DataLoadingError) -> Data? in
                do {
                    return try handle.read(upToCount: wanted)
                } catch {
                    throw DataLoadingError(.fileUnreadable, url: url, message: "reading the file failed: \(error.localizedDescription)", underlying: error)
                }
            }
            guard let chunk, !chunk.isEmpty else {
                try? handle.close()
                return nil
            }
            let total = read + chunk.count
            guard total <= limit else {
                try? handle.close()
                throw DataLoadingError(.responseTooLarge, url: url, message: "the file grew past the limit of \(limit) bytes")
            }
            state.withLock { $0 = total }
            return chunk
        }
        let response = HTTPURLResponse(url: url, statusCode: range == nil ? 200 : 206, httpVersion: "HTTP/1.1", headerFields: headers)
            ?? URLResponse(url: url, mimeType: nil, expectedContentLength: length, textEncodingName: nil)
        return DataLoadingResponse(response: response, body: body)
    }

    /// A file's `Last-Modified`, `ETag` and `Accept-Ranges`: the tag is
    /// the base64url SHA-256 of `PATH__SIZE__MTIME-NANOSECONDS`, as
    /// imgproxy's file storage makes it.
    static func validators(path: String, size: Int, modified: timespec) -> [String: String] {
        let nanoseconds = Int64(modified.tv_sec) * 1_000_000_000 + Int64(modified.tv_nsec)
        let digest = SHA256.digest(of: Array("\(path)__\(size)__\(nanoseconds)".utf8))
        let tag = Data(digest).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        let date = Date(timeIntervalSince1970: TimeInterval(modified.tv_sec))
        return ["ETag": "\"\(tag)\"", "Last-Modified": HTTPDate.format(date), "Accept-Ranges": "bytes"]
    }

    /// The bytes one `Range` header names in a file of `size` bytes
    /// (`bytes=A-B`, `bytes=A-`, `bytes=-N`), clamped to the file; `nil`
    /// for anything else (several ranges, other units, one outside the
    /// file), which is answered with the whole file, as RFC 9110 allows.
    static func byteRange(_ header: String, size: Int) -> Range<Int>? {
        guard header.hasPrefix("bytes="), size > 0 else { return nil }
        let spec = header.dropFirst(6).trimmingCharacters(in: .whitespaces)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return nil }
        let (first, last) = (spec[..<dash], spec[spec.index(after: dash)...])
        if first.isEmpty {
            guard let count = Int(last), count > 0 else { return nil }
            return max(0, size - count)..<size
        }
        guard let start = Int(first), start >= 0, start < size else { return nil }
        if last.isEmpty { return start..<size }
        guard let end = Int(last), end >= start else { return nil }
        return start..<min(end, size - 1) + 1
    }

    /// Runs blocking file work on ``ioQueue`` and waits for it without holding a cooperative thread.
    package static func onIOQueue<T: Sendable>(_ work: @escaping @Sendable () throws(DataLoadingError) -> T) async throws(DataLoadingError) -> T {
        let result: Result<T, DataLoadingError> = await withCheckedContinuation { continuation in
            ioQueue.async {
                do throws(DataLoadingError) {
                    continuation.resume(returning: .success(try work()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    /// "a directory", "a FIFO"...: for messages.
    private static func kind(of mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symbolic link"
        default: "a special file"
        }
    }
}
