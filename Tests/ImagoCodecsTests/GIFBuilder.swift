import Foundation

/// An opaque colour of a GIF colour map.
struct RGB: Hashable {
    var red: UInt8, green: UInt8, blue: UInt8

    static let red = RGB(red: 255, green: 0, blue: 0)
    static let green = RGB(red: 0, green: 255, blue: 0)
    static let blue = RGB(red: 0, green: 0, blue: 255)
    static let yellow = RGB(red: 255, green: 255, blue: 0)
    static let white = RGB(red: 255, green: 255, blue: 255)
    static let black = RGB(red: 0, green: 0, blue: 0)

    /// The colour as a decoded RGBA8 pixel.
    var rgba: [UInt8] { [red, green, blue, 255] }
}

/// Builds GIF files byte by byte, so that tests know every pixel by
/// construction and can write the broken files a hostile server would send.
struct GIFBuilder {
    /// One image descriptor and what precedes it.
    struct Frame {
        var left = 0, top = 0, width: Int, height: Int
        /// Colour indices row by row, top to bottom, `width * height` of them.
        var indices: [UInt8]
        var localColors: [RGB]?
        /// Stored in interlaced row order, with the interlace flag set.
        var interlaced = false
        /// Write a Graphics Control Extension with these fields.
        var control: Control? = Control()

        struct Control {
            var delay = 10
            var disposal = 0
            var transparentIndex: Int?
        }

        /// A `width` x `height` frame of one colour index.
        static func solid(_ index: UInt8, width: Int, height: Int, left: Int = 0, top: Int = 0) -> Frame {
            Frame(left: left, top: top, width: width, height: height, indices: Array(repeating: index, count: width * height))
        }
    }

    var width: Int
    var height: Int
    var globalColors: [RGB]?
    /// Write a NETSCAPE2.0 extension with this loop count.
    var loopCount: Int?
    var frames: [Frame] = []
    var trailer = true
    /// Clear the LZW table when it fills (otherwise keep it: a deferred clear).
    var clearsWhenFull = true

    /// The encoded file.
    var data: Data {
        var out = Array("GIF89a".utf8)
        out += Self.word(width) + Self.word(height)
        if let globalColors {
            out += [0x80 | Self.tableBits(globalColors.count), 0, 0]
            out += Self.colorTable(globalColors)
        } else {
            out += [0, 0, 0]
        }
        if let loopCount {
            out += [0x21, 0xFF, 11] + Array("NETSCAPE2.0".utf8) + [3, 1] + Self.word(loopCount) + [0]
        }
        for frame in frames {
            if let control = frame.control {
                let packed = UInt8(control.disposal << 2) | (control.transparentIndex == nil ? 0 : 1)
                out += [0x21, 0xF9, 4, packed] + Self.word(control.delay) + [UInt8(control.transparentIndex ?? 0), 0]
            }
            out += [0x2C] + Self.word(frame.left) + Self.word(frame.top) + Self.word(frame.width) + Self.word(frame.height)
            var flags: UInt8 = frame.interlaced ? 0x40 : 0
            if let local = frame.localColors { flags |= 0x80 | Self.tableBits(local.count) }
            out.append(flags)
            if let local = frame.localColors { out += Self.colorTable(local) }
            let paletteSize = frame.localColors?.count ?? globalColors?.count ?? 256   // no map: 8-bit codes
            let minimumCodeSize = max(2, Int(Self.tableBits(paletteSize)) + 1)
            let rows = frame.interlaced ? Self.interlacedOrder(height: frame.height) : Array(0..<frame.height)
            let stored = rows.flatMap { frame.indices[$0 * frame.width..<($0 + 1) * frame.width] }
            out.append(UInt8(minimumCodeSize))
            out += Self.subBlocks(Self.lzw(stored, minimumCodeSize: minimumCodeSize, clearsWhenFull: clearsWhenFull))
        }
        if trailer { out.append(0x3B) }
        return Data(out)
    }

    static func word(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }

    /// The 3-bit size field for a table of `count` colours (2^(field+1) entries).
    static func tableBits(_ count: Int) -> UInt8 {
        var bits: UInt8 = 0
        while 2 << Int(bits) < count { bits += 1 }
        return bits
    }

    /// The colours, padded with black to the power of two the size field says.
    static func colorTable(_ colors: [RGB]) -> [UInt8] {
        let size = 2 << Int(tableBits(colors.count))
        return (colors + Array(repeating: .black, count: size - colors.count)).flatMap { [$0.red, $0.green, $0.blue] }
    }

    /// Row numbers in the order an interlaced GIF stores them.
    static func interlacedOrder(height: Int) -> [Int] {
        [(0, 8), (4, 8), (2, 4), (1, 2)].flatMap { start, step in Array(stride(from: start, to: height, by: step)) }
    }

    /// Splits `bytes` into data sub-blocks of at most 255 bytes and a terminator.
    static func subBlocks(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var start = 0
        while start < bytes.count {
            let end = min(start + 255, bytes.count)
            out.append(UInt8(end - start))
            out += bytes[start..<end]
            start = end
        }
        return out + [0]
    }

    /// GIF's variable-width LZW, least significant bit first, with a clear
    /// code first and whenever the 4096-entry table fills; with
    /// `clearsWhenFull` false, a full table is kept and used as it is (a
    /// "deferred clear", which some encoders write) until the end.
    static func lzw(_ indices: [UInt8], minimumCodeSize: Int, clearsWhenFull: Bool = true) -> [UInt8] {
        let clear = 1 << minimumCodeSize
        let end = clear + 1
        var codeSize = minimumCodeSize + 1
        var next = end + 1
        var table: [Int: Int] = [:]
        var out: [UInt8] = []
        var buffer = 0, bufferedBits = 0
        func emit(_ code: Int) {
            buffer |= code << bufferedBits
            bufferedBits += codeSize
            while bufferedBits >= 8 {
                out.append(UInt8(buffer & 0xFF))
                buffer >>= 8
                bufferedBits -= 8
            }
        }
        // After each code the decoder's next free entry moves on; it widens
        // codes once that entry no longer fits.
        func advance() {
            next += 1
            if next > 1 << codeSize && codeSize < 12 { codeSize += 1 }
        }
        emit(clear)
        var prefix: Int?
        for index in indices.map(Int.init) {
            guard let current = prefix else {
                prefix = index
                continue
            }
            if let code = table[current << 8 | index] {
                prefix = code
                continue
            }
            emit(current)
            if next < 4096 {
                table[current << 8 | index] = next
                advance()
            }
            if next == 4096 && clearsWhenFull {
                emit(clear)
                table = [:]
                next = end + 1
                codeSize = minimumCodeSize + 1
            }
            prefix = index
        }
        if let prefix {
            emit(prefix)
            if next < 4096 { advance() }
        }
        emit(end)
        if bufferedBits > 0 { out.append(UInt8(buffer & 0xFF)) }
        return out
    }
}
