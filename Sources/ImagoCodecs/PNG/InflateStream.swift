import CZlib

/// A zlib stream read a few bytes at a time from PNG image data chunks,
/// without joining them: how a large PNG is decoded row by row.
///
/// Any failure, including a stream that ends early, goes on past the bytes
/// asked for, or leaves input unread, is reported as `false`, never thrown:
/// the caller hands the file to libspng, which reports the error.
struct InflateStream: ~Copyable {
    /// On the heap: zlib remembers where its stream is and refuses a moved one.
    private let stream: UnsafeMutablePointer<z_stream>
    private let chunks: [UnsafeRawBufferPointer]
    private var nextChunk = 0
    private var ended = false
    private let initialized: Bool

    /// A stream over `chunks`, the payloads of the `IDAT` chunks in order.
    init(chunks: [UnsafeRawBufferPointer]) {
        self.chunks = chunks
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        initialized = inflateInit_(stream, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK
    }

    deinit {
        if initialized { inflateEnd(stream) }
        stream.deallocate()
    }

    /// Inflates exactly `count` bytes into `buffer`; `false` if the stream
    /// cannot give them.
    mutating func read(into buffer: UnsafeMutablePointer<UInt8>, count: Int) -> Bool {
        guard initialized else { return false }
        stream.pointee.next_out = buffer
        stream.pointee.avail_out = UInt32(count)
        while stream.pointee.avail_out > 0 {
            guard !ended else { return false }
            feed()   // with no input left, zlib may still hold output
            let status = inflate(stream, Z_NO_FLUSH)
            if status == Z_STREAM_END {
                ended = true
            } else if status != Z_OK {
                return false   // Z_BUF_ERROR here: no input and nothing more to give
            }
        }
        return true
    }

    /// Whether the stream ends here, its checksum correct, with no more
    /// output and no unread input.
    mutating func finish() -> Bool {
        guard initialized else { return false }
        let spare = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
        defer { spare.deallocate() }
        while !ended {
            feed()
            stream.pointee.next_out = spare
            stream.pointee.avail_out = 1
            let status = inflate(stream, Z_NO_FLUSH)
            if stream.pointee.avail_out == 0 { return false }   // more bytes than the image holds
            if status == Z_STREAM_END {
                ended = true
            } else if status != Z_OK {
                return false
            }
        }
        return stream.pointee.avail_in == 0 && chunks[nextChunk...].allSatisfy { $0.isEmpty }
    }

    /// Makes sure input is waiting: the next non-empty chunk when the
    /// current one is used up, if any is left.
    private mutating func feed() {
        while stream.pointee.avail_in == 0 {
            guard nextChunk < chunks.count else { return }
            let chunk = chunks[nextChunk]
            nextChunk += 1
            guard let base = chunk.baseAddress, !chunk.isEmpty else { continue }
            stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self))
            stream.pointee.avail_in = UInt32(chunk.count)
        }
    }
}
