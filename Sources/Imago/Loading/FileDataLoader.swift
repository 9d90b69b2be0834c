import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Loads `file` URLs from the local file system.
///
/// The task reads on a background queue in chunks, reports a plain
/// `URLResponse` with the file's length and no content type (the bytes
/// decide the format), and stops between chunks when cancelled.
public struct FileDataLoader: DataLoading {
    /// The largest file the loader reads; larger files fail with
    /// ``DataLoadingError/Code/responseTooLarge`` before any byte is read.
    public var maximumResponseSize: Int
    /// The size of each chunk delivered to the handler.
    public var chunkSize: Int

    /// Creates a file loader.
    public init(maximumResponseSize: Int = DataLoader.defaultMaximumResponseSize, chunkSize: Int = 1 << 20) {
        precondition(chunkSize > 0, "chunkSize must be positive")
        self.maximumResponseSize = maximumResponseSize
        self.chunkSize = chunkSize
    }

    public func dataTask(
        with request: URLRequest,
        eventHandler: @escaping @Sendable (DataLoadingEvent) -> Void
    ) -> any DataLoadingTask {
        FileLoadingTask(url: request.url, loader: self, eventHandler: eventHandler)
    }
}

private final class FileLoadingTask: DataLoadingTask {
    private enum Phase { case idle, running, done }

    private let url: URL?
    private let loader: FileDataLoader
    private let eventHandler: @Sendable (DataLoadingEvent) -> Void
    private let phase = Locked(Phase.idle)

    init(url: URL?, loader: FileDataLoader, eventHandler: @escaping @Sendable (DataLoadingEvent) -> Void) {
        self.url = url
        self.loader = loader
        self.eventHandler = eventHandler
    }

    func resume() {
        let starts = phase.withLock { phase in
            guard phase == .idle else { return false }
            phase = .running
            return true
        }
        guard starts else { return }
        DispatchQueue.global(qos: .userInitiated).async { [self] in read() }
    }

    func cancel() {
        let wasLive = phase.withLock { phase in
            defer { phase = .done }
            return phase != .done
        }
        if wasLive {
            eventHandler(.failed(DataLoadingError(.cancelled, url: url, message: "the load was cancelled")))
        }
    }

    /// Delivers `event` unless the task was cancelled; a final event ends the task.
    @discardableResult
    private func deliver(_ event: DataLoadingEvent, isFinal: Bool = false) -> Bool {
        let live = phase.withLock { phase in
            guard phase == .running else { return false }
            if isFinal { phase = .done }
            return true
        }
        if live { eventHandler(event) }
        return live
    }

    private func fail(_ code: DataLoadingError.Code, _ message: String, underlying: (any Error)? = nil) {
        deliver(.failed(DataLoadingError(code, url: url, message: message, underlying: underlying)), isFinal: true)
    }

    private func read() {
        guard let url, url.isFileURL else {
            fail(.unsupportedScheme, "the file loader reads only file URLs")
            return
        }
        let handle: FileHandle
        let size: Int
        do {
            let values = try url.resourceValues(forKeys: [.isDirectoryKey, .fileSizeKey])
            if values.isDirectory == true {
                fail(.fileUnreadable, "the path is a directory")
                return
            }
            size = values.fileSize ?? 0
            handle = try FileHandle(forReadingFrom: url)
        } catch {
            fail(.fileUnreadable, "the file could not be opened: \(error.localizedDescription)", underlying: error)
            return
        }
        defer { try? handle.close() }
        guard size <= loader.maximumResponseSize else {
            fail(.responseTooLarge, "the file has \(size) bytes; the limit is \(loader.maximumResponseSize)")
            return
        }
        let response = URLResponse(url: url, mimeType: nil, expectedContentLength: size, textEncodingName: nil)
        guard deliver(.response(response)) else { return }
        var total = 0
        do {
            while let chunk = try handle.read(upToCount: loader.chunkSize), !chunk.isEmpty {
                total += chunk.count
                // The file may have grown since its size was read.
                if total > loader.maximumResponseSize {
                    fail(.responseTooLarge, "the file grew past the limit of \(loader.maximumResponseSize) bytes")
                    return
                }
                guard deliver(.data(chunk)) else { return }
            }
        } catch {
            fail(.fileUnreadable, "reading the file failed: \(error.localizedDescription)", underlying: error)
            return
        }
        deliver(.finished, isFinal: true)
    }
}
