import CISAL

/// A zlib stream read a few bytes at a time from PNG image data chunks,
/// without joining them: how a large PNG is decoded row by row. ISA-L's
/// igzip inflates it, about twice as fast as zlib (`Benchmarks/performance.md`
/// §5), and checks its Adler-32.
///
/// Any failure, including a stream that ends early, goes on past the bytes
/// asked for, or leaves input unread, is reported as `false`, never thrown:
/// the caller hands the file to libspng, which reports the error.
struct InflateStream: ~Copyable {
    /// On the heap: the state is large (tables and a window of output).
    private let state: UnsafeMutablePointer<inflate_state>
    private let chunks: [UnsafeRawBufferPointer]
    private var nextChunk = 0
    /// Set by the first error; igzip does not remember one itself.
    private var failed = false

    /// A stream over `chunks`, the payloads of the `IDAT` chunks in order.
    init(chunks: [UnsafeRawBufferPointer]) {
        self.chunks = chunks
        state = .allocate(capacity: 1)
        isal_inflate_init(state)
        state.pointee.crc_flag = UInt32(ISAL_ZLIB)
        failed = !Self.hasStrictZlibHeader(chunks)
    }

    /// Whether the stream starts as zlib requires: deflate, a window of at
    /// most 32 KiB, no preset dictionary, a correct header check. igzip takes
    /// a larger window that zlib (and so libspng) refuses.
    private static func hasStrictZlibHeader(_ chunks: [UnsafeRawBufferPointer]) -> Bool {
        let header = chunks.lazy.flatMap { $0 }.prefix(2)
        guard header.count == 2 else { return false }
        let method = header[header.startIndex], flags = header[header.index(after: header.startIndex)]
        return method & 0x0F == 8 && method >> 4 <= 7 && flags & 0x20 == 0
            && (UInt16(method) << 8 | UInt16(flags)) % 31 == 0
    }

    deinit {
        state.deallocate()
    }

    /// Whether the whole stream, its checksum included, has been read.
    private var ended: Bool { state.pointee.block_state == ISAL_BLOCK_FINISH }

    /// Inflates exactly `count` bytes into `buffer`; `false` if the stream
    /// cannot give them.
    ///
    /// - Parameter pieceLimit: The most bytes handed to igzip at once (its
    ///   output count is 32-bit, and a whole image may be larger); tests
    ///   lower it.
    mutating func read(into buffer: UnsafeMutablePointer<UInt8>, count: Int, pieceLimit: Int = Int(UInt32.max)) -> Bool {
        var offset = 0
        while offset < count {
            let piece = min(count - offset, pieceLimit)
            state.pointee.next_out = buffer + offset
            state.pointee.avail_out = UInt32(piece)
            while state.pointee.avail_out > 0 {
                guard !ended, step() else { return false }
            }
            offset += piece
        }
        return true
    }

    /// Whether the stream ends here, its checksum correct, with no more
    /// output and no unread input.
    mutating func finish() -> Bool {
        var spare: UInt8 = 0
        while !ended {
            let stepped = withUnsafeMutablePointer(to: &spare) { spare in
                state.pointee.next_out = spare
                state.pointee.avail_out = 1
                return step()
            }
            if !stepped || state.pointee.avail_out == 0 { return false }   // an error, or more bytes than the image holds
        }
        return !failed && state.pointee.avail_in == 0 && chunks[nextChunk...].allSatisfy { $0.isEmpty }
    }

    /// Runs the inflater once with input waiting, if any is left; `false`
    /// on an error or when it can make no progress (the stream is cut short).
    private mutating func step() -> Bool {
        guard !failed else { return false }
        feed()   // with no input left, igzip may still hold output
        let input = state.pointee.avail_in, output = state.pointee.avail_out
        if isal_inflate(state) < 0 {   // an invalid block, symbol, distance, header or checksum
            failed = true
            return false
        }
        let progressed = state.pointee.avail_in != input || state.pointee.avail_out != output || ended
        if !progressed { failed = true }
        return progressed
    }

    /// Makes sure input is waiting: the next non-empty chunk when the
    /// current one is used up, if any is left.
    private mutating func feed() {
        while state.pointee.avail_in == 0 {
            guard nextChunk < chunks.count else { return }
            let chunk = chunks[nextChunk]
            nextChunk += 1
            guard let base = chunk.baseAddress, !chunk.isEmpty else { continue }
            state.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self))
            state.pointee.avail_in = UInt32(chunk.count)
        }
    }
}
