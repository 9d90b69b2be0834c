import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Loads `file` URLs from the local file system.
///
/// It reports a plain `URLResponse` with the file's length and no content
/// type (the bytes decide the format). The body is read in chunks as it is
/// consumed, on the consuming task, so a load that is cancelled or dropped
/// stops between chunks.
public struct FileDataLoader: DataLoading {
    /// The largest file the loader reads; larger files fail with
    /// ``DataLoadingError/Code/responseTooLarge`` before any byte is read.
    public var maximumResponseSize: Int
    /// The size of each chunk of the body.
    public var chunkSize: Int

    /// Creates a file loader.
    public init(maximumResponseSize: Int = DataLoader.defaultMaximumResponseSize, chunkSize: Int = 1 << 20) {
        precondition(chunkSize > 0, "chunkSize must be positive")
        self.maximumResponseSize = maximumResponseSize
        self.chunkSize = chunkSize
    }

    /// Opens the file at `request`'s URL and checks its size; the body is
    /// read as the returned stream is consumed.
    ///
    /// - Throws: ``DataLoadingError`` with ``DataLoadingError/Code/unsupportedScheme``
    ///   for a URL that is not a `file` URL, ``DataLoadingError/Code/fileUnreadable``
    ///   for a missing file, a directory or one that cannot be opened, and
    ///   ``DataLoadingError/Code/responseTooLarge`` for a file over the limit.
    public func load(_ request: URLRequest) async throws -> DataLoadingResponse {
        let url = request.url
        @Sendable func failure(_ code: DataLoadingError.Code, _ message: String, underlying: (any Error)? = nil) -> DataLoadingError {
            DataLoadingError(code, url: url, message: message, underlying: underlying)
        }
        guard let url, url.isFileURL else { throw failure(.unsupportedScheme, "the file loader reads only file URLs") }
        let handle: FileHandle
        let size: Int
        do {
            let values = try url.resourceValues(forKeys: [.isDirectoryKey, .fileSizeKey])
            guard values.isDirectory != true else { throw failure(.fileUnreadable, "the path is a directory") }
            size = values.fileSize ?? 0
            handle = try FileHandle(forReadingFrom: url)
        } catch let error as DataLoadingError {
            throw error
        } catch {
            throw failure(.fileUnreadable, "the file could not be opened: \(error.localizedDescription)", underlying: error)
        }
        let limit = maximumResponseSize
        guard size <= limit else { throw failure(.responseTooLarge, "the file has \(size) bytes; the limit is \(limit)") }
        let chunkSize = self.chunkSize
        // The handle closes when the stream is done with it (at the end, or
        // when a consumer that stopped early lets go of the stream).
        let body = AsyncThrowingStream<Data, any Error> {
            let chunk: Data?
            do {
                chunk = try handle.read(upToCount: chunkSize)
            } catch {
                throw failure(.fileUnreadable, "reading the file failed: \(error.localizedDescription)", underlying: error)
            }
            guard let chunk, !chunk.isEmpty else {
                try? handle.close()
                return nil
            }
            // The file may have grown since its size was read.
            if (try? handle.offset()).map({ $0 > UInt64(limit) }) ?? false {
                throw failure(.responseTooLarge, "the file grew past the limit of \(limit) bytes")
            }
            return chunk
        }
        let response = URLResponse(url: url, mimeType: nil, expectedContentLength: size, textEncodingName: nil)
        return DataLoadingResponse(response: response, body: body)
    }
}
