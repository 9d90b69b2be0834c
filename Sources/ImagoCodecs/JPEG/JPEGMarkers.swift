import Foundation

/// The marker segments of a JPEG before its first scan, found as libjpeg
/// finds them: between segments it discards any bytes that are not `FF`
/// (and stuffed `FF 00` pairs) with the warning "Corrupt JPEG data: N
/// extraneous bytes before marker", and it skips fill bytes (`FF FF`).
///
/// The metadata reader walks these segments, so it sees what libjpeg sees;
/// the decoder hands libjpeg ``withoutExtraneousBytes(in:)``, so that the
/// only warnings left are about the scans, where "premature end" means
/// that data is missing.
struct JPEGMarkers {
    /// One marker and its segment.
    struct Segment {
        /// The marker code (the byte after `FF`).
        let marker: UInt8
        /// The marker's two bytes, its length field and its payload; just the
        /// two bytes for a marker without a segment (`RSTn`, `TEM`).
        let range: Range<Int>
        /// The payload, after the length field.
        var payload: Range<Int> { min(range.lowerBound + 4, range.upperBound)..<range.upperBound }
    }

    /// The segments after `SOI`, in order, up to the first `SOS` (not included).
    private(set) var segments: [Segment] = []
    /// Where the first `SOS` marker starts; `nil` when the walk stopped
    /// before it (a truncated header, `EOI`, a second `SOI`, a length below 2).
    private(set) var scanStart: Int?
    /// How many bytes libjpeg discards before the markers as extraneous.
    private(set) var extraneousBytes = 0

    /// Walks `data`, which starts with `FF D8`; offsets are relative to its
    /// `startIndex` and every one is bounds-checked.
    init(reading data: Data) {
        data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return }
            var offset = 2
            while let (marker, at) = nextMarker(in: bytes, from: offset) {
                switch marker {
                case 0xDA:
                    scanStart = at
                    return
                case 0xD8, 0xD9:
                    return
                case 0x01, 0xD0...0xD7:
                    segments.append(Segment(marker: marker, range: at..<at + 2))
                    offset = at + 2
                default:
                    guard at + 4 <= bytes.count else { return }
                    let length = Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
                    guard length >= 2, at + 2 + length <= bytes.count else { return }
                    segments.append(Segment(marker: marker, range: at..<at + 2 + length))
                    offset = at + 2 + length
                }
            }
        }
    }

    /// libjpeg's `next_marker`: the next marker code at or after `offset`
    /// and where its `FF` is, counting what it discards on the way.
    private mutating func nextMarker(in bytes: UnsafeBufferPointer<UInt8>, from offset: Int) -> (UInt8, Int)? {
        var index = offset
        while true {
            while index < bytes.count && bytes[index] != 0xFF {
                extraneousBytes += 1
                index += 1
            }
            var next = index + 1
            while next < bytes.count && bytes[next] == 0xFF { next += 1 }
            guard next < bytes.count else { return nil }
            if bytes[next] != 0 { return (bytes[next], next - 1) }
            extraneousBytes += 2   // a stuffed zero: FF 00
            index = next + 1
        }
    }

    /// `data` with the extraneous bytes and fill bytes before its first scan
    /// left out: the same segments, which libjpeg decodes to the same pixels
    /// without a warning. `data` itself when there are none, or when the
    /// walk did not reach a scan.
    func withoutExtraneousBytes(in data: Data) -> Data {
        guard extraneousBytes > 0, let scanStart else { return data }
        var cleaned = Data(capacity: data.count)
        cleaned.append(contentsOf: [0xFF, 0xD8])
        for segment in segments {
            cleaned.append(data[data.startIndex + segment.range.lowerBound..<data.startIndex + segment.range.upperBound])
        }
        cleaned.append(data[(data.startIndex + scanStart)...])
        return cleaned
    }

    /// Whether the frame is progressive (`SOF2`, `SOF6`, `SOF10`, `SOF14`):
    /// the kind whose scans can be counted in thousands.
    var isProgressive: Bool {
        segments.contains { [0xC2, 0xC6, 0xCA, 0xCE].contains($0.marker) }
    }

    /// How many scans (`SOS` markers) `data` holds from its first scan on,
    /// counting no further than `limit + 1`: the markers between and in
    /// the scans are walked (stuffed `FF 00`, restart markers and fill
    /// bytes skipped; other segments by their length), no data is decoded.
    /// Cheap beside a decode: one pass over the bytes, stopping at `EOI`.
    func scanCount(in data: Data, limit: Int) -> Int {
        guard let scanStart else { return 0 }
        return data.withUnsafeBytes { raw -> Int in
            let bytes = raw.bindMemory(to: UInt8.self)
            var count = 0
            var index = scanStart
            while index + 1 < bytes.count, count <= limit {
                // At a marker: FF then its code.
                let marker = bytes[index + 1]
                if marker == 0xD9 { break }
                if marker == 0xDA { count += 1 }
                guard index + 4 <= bytes.count else { break }
                let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
                guard length >= 2 else { break }
                index += 2 + length
                // The entropy-coded data (after SOS) or nothing: on to the next real marker.
                while index + 1 < bytes.count {
                    guard let found = memchr(raw.baseAddress! + index, 0xFF, bytes.count - index) else { return count }
                    index = raw.baseAddress!.distance(to: UnsafeRawPointer(found))
                    var next = index + 1
                    while next < bytes.count && bytes[next] == 0xFF { next += 1 }
                    guard next < bytes.count else { return count }
                    let code = bytes[next]
                    if code == 0x00 || (0xD0...0xD7).contains(code) {
                        index = next + 1
                        continue
                    }
                    index = next - 1
                    break
                }
            }
            return count
        }
    }
}
