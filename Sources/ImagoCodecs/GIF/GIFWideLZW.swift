import CGif

/// The raster of a frame whose LZW minimum code size is 9, 10 or 11:
/// above the 8 the GIF specification allows, which giflib refuses ("failed
/// to read") and browsers and Pillow decode (some encoders write 11 for any
/// 8-bit image). Codes are at most 12 bits wide, as in any GIF; a literal
/// code above 255 is taken modulo 256, as browsers store it.
///
/// It reads the data sub-blocks through `nextByte` (the same reader giflib
/// uses, positioned after the code-size byte), so giflib carries on with the
/// next record once the raster is consumed. Damaged data fails as giflib's
/// own decoder fails: an early end code, an empty sub-block or a code not
/// yet in the table.
final class GIFWideLZW {
    private let codeSize: Int
    private var remainingPixels: Int
    private var width: Int
    private var next: Int
    private var previous: Int?
    private var prefix = [UInt16](repeating: 0, count: 4096)
    private var suffix = [UInt8](repeating: 0, count: 4096)
    private var first = [UInt8](repeating: 0, count: 4096)
    /// A decoded string not yet handed out, last byte first.
    private var pending: [UInt8] = []
    private var bits: UInt32 = 0
    private var bitCount = 0
    /// Bytes left in the current data sub-block.
    private var blockRemaining = 0
    /// Whether the terminating empty sub-block has been read.
    private var finished = false

    private var clear: Int { 1 << codeSize }

    /// A decoder for a frame of `pixelCount` pixels; `codeSize` is 9...11.
    init(codeSize: Int, pixelCount: Int) {
        self.codeSize = codeSize
        remainingPixels = pixelCount
        width = codeSize + 1
        next = (1 << codeSize) + 2
        for code in 0..<(1 << codeSize) {
            suffix[code] = UInt8(truncatingIfNeeded: code)
            first[code] = UInt8(truncatingIfNeeded: code)
        }
        pending.reserveCapacity(4096)
    }

    /// Decodes the next `count` colour indices into `row`; after the
    /// frame's last pixel, skips the rest of its sub-blocks.
    func readRow(into row: UnsafeMutablePointer<GifPixelType>, count: Int, nextByte: () -> UInt8?) throws {
        guard count <= remainingPixels else { throw CodecError.giflib(D_GIF_ERR_DATA_TOO_BIG) }
        var filled = 0
        while filled < count {
            if let byte = pending.popLast() {
                row[filled] = byte
                filled += 1
                continue
            }
            try decodeCode(nextByte)
        }
        remainingPixels -= count
        if remainingPixels == 0 { try skip(nextByte) }
    }

    /// Skips the rest of the raster, up to and including its empty sub-block.
    func skip(_ nextByte: () -> UInt8?) throws {
        while !finished {
            if blockRemaining == 0 {
                guard let length = nextByte() else { throw CodecError.giflib(D_GIF_ERR_READ_FAILED) }
                blockRemaining = Int(length)
                finished = length == 0
            } else {
                guard nextByte() != nil else { throw CodecError.giflib(D_GIF_ERR_READ_FAILED) }
                blockRemaining -= 1
            }
        }
    }

    /// Reads one code and puts its string on `pending`.
    private func decodeCode(_ nextByte: () -> UInt8?) throws {
        let code = try readCode(nextByte)
        if code == clear {
            width = codeSize + 1
            next = clear + 2
            previous = nil
            return
        }
        guard code != clear + 1 else { throw CodecError.giflib(D_GIF_ERR_EOF_TOO_SOON) }
        guard let previous else {
            guard code < clear else { throw CodecError.giflib(D_GIF_ERR_IMAGE_DEFECT) }
            pending.append(suffix[code])
            self.previous = code
            return
        }
        guard code < next || (code == next && next < 4096) else { throw CodecError.giflib(D_GIF_ERR_IMAGE_DEFECT) }
        // The string of `code`; for the code being defined (KwKwK), the previous string and its first byte.
        let head = code < next ? first[code] : first[previous]
        if code == next { pending.append(head) }
        var walk = code < next ? code : previous
        while walk >= clear {
            pending.append(suffix[walk])
            walk = Int(prefix[walk])
        }
        pending.append(suffix[walk])
        if next < 4096 {
            prefix[next] = UInt16(previous)
            suffix[next] = head
            first[next] = first[previous]
            next += 1
            if next == 1 << width && width < 12 { width += 1 }
        }
        self.previous = code
    }

    /// The next `width` bits of the sub-blocks, least significant first.
    private func readCode(_ nextByte: () -> UInt8?) throws -> Int {
        while bitCount < width {
            if blockRemaining == 0 {
                guard !finished, let length = nextByte() else { throw CodecError.giflib(D_GIF_ERR_READ_FAILED) }
                // The end code should have come first, as giflib says.
                guard length > 0 else {
                    finished = true
                    throw CodecError.giflib(D_GIF_ERR_IMAGE_DEFECT)
                }
                blockRemaining = Int(length)
            }
            guard let byte = nextByte() else { throw CodecError.giflib(D_GIF_ERR_READ_FAILED) }
            blockRemaining -= 1
            bits |= UInt32(byte) << bitCount
            bitCount += 8
        }
        let code = Int(bits & (1 << width - 1))
        bits >>= width
        bitCount -= width
        return code
    }
}
