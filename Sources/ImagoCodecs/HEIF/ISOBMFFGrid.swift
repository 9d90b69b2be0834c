import Foundation

/// How many tiles the grids of a HEIF-family file (AVIF, HEIC) are made
/// of, read from its boxes before any codec sees it: the `dimg` ("derived
/// image") references of the `iref` box inside `meta`, where each grid
/// item names the tiles it is assembled from. A grid of thousands of tiles
/// costs a decoder state per tile, whatever the file's size, so the count
/// is checked against ``ImageDecodingOptions/maximumTileCount`` first.
///
/// Every offset is bounds-checked; a file whose boxes do not parse counts
/// as no grid (1), and the codec's own parser judges it.
enum ISOBMFFGrid {
    /// The tiles every grid in `data` references together (the colour
    /// grid and an alpha grid beside it); 1 for a file with no grid.
    static func tileCount(in data: Data) -> Int {
        data.withUnsafeBytes { raw -> Int in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard let meta = box("meta", in: bytes, range: 0..<bytes.count), meta.count >= 4,
                  let iref = box("iref", in: bytes, range: meta.lowerBound + 4..<meta.upperBound), iref.count >= 4 else { return 1 }
            let wideIDs = bytes[iref.lowerBound] != 0   // version 1: 32-bit item IDs
            var tiles = 0
            forEachBox(in: bytes, range: iref.lowerBound + 4..<iref.upperBound) { type, payload in
                guard type == "dimg" else { return }
                let idSize = wideIDs ? 4 : 2
                guard payload.count >= idSize + 2 else { return }
                let countAt = payload.lowerBound + idSize
                tiles += Int(bytes[countAt]) << 8 | Int(bytes[countAt + 1])
            }
            return max(1, tiles)
        }
    }

    /// The payload of the first box of `type` directly in `range`.
    private static func box(_ type: String, in bytes: UnsafeBufferPointer<UInt8>, range: Range<Int>) -> Range<Int>? {
        var found: Range<Int>?
        forEachBox(in: bytes, range: range) { boxType, payload in
            if found == nil, boxType == type { found = payload }
        }
        return found
    }

    /// Calls `body` with each box's type and payload in `range`, in order,
    /// stopping at the first box that does not fit.
    private static func forEachBox(in bytes: UnsafeBufferPointer<UInt8>, range: Range<Int>, _ body: (String, Range<Int>) -> Void) {
        var offset = range.lowerBound
        // A bound on boxes walked, whatever the file says.
        var boxes = 0
        while offset + 8 <= range.upperBound, boxes < 100_000 {
            boxes += 1
            var size = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let type = String(decoding: UnsafeBufferPointer(rebasing: bytes[offset + 4..<offset + 8]), as: UTF8.self)
            var header = 8
            if size == 1 {
                guard offset + 16 <= range.upperBound else { return }
                var large: UInt64 = 0
                for index in 0..<8 { large = large << 8 | UInt64(bytes[offset + 8 + index]) }
                guard large <= UInt64(range.upperBound - offset) else { return }
                size = Int(large)
                header = 16
            } else if size == 0 {
                size = range.upperBound - offset   // to the end
            }
            guard size >= header, offset + size <= range.upperBound else { return }
            body(type, offset + header..<offset + size)
            offset += size
        }
    }
}
