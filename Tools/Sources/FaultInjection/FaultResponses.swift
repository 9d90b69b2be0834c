import Foundation
import SharedState
import Imago
import LoopbackServer

/// Responses that break the rules on purpose, for testing how a client copes.
extension ServedResponse {
    /// A `429 Too Many Requests` asking the client to wait `retryAfter` seconds.
    public static func tooManyRequests(retryAfter seconds: Int) -> ServedResponse {
        text("slow down\n", status: 429).withHeader("Retry-After", String(seconds))
    }

    /// A `503 Service Unavailable` asking the client to wait `retryAfter` seconds.
    public static func serviceUnavailable(retryAfter seconds: Int) -> ServedResponse {
        text("down for maintenance\n", status: 503).withHeader("Retry-After", String(seconds))
    }

    /// A `200` whose `Content-Length` declares `declaredLength` bytes (10 GB
    /// unless told) but which sends only `body`, as `delivery` says: by
    /// default the connection is closed after it (use ``Delivery/whole`` to
    /// leave it open and silent, or ``Delivery/trickle(chunkSize:interval:)``).
    public static func oversized(
        declaredLength: Int = 10 << 30,
        body: Data = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]),
        contentType: String = "image/png",
        delivery: Delivery = .truncated(afterBytes: .max)
    ) -> ServedResponse {
        ServedResponse(headers: [("Content-Type", contentType)], body: body, delivery: delivery).declaringLength(declaredLength)
    }

    /// A gzip bomb: `Content-Encoding: gzip` with a body of about
    /// `inflatedSize / 1000` bytes that inflates to `inflatedSize` zero bytes
    /// (100 MB unless told). The gzip stream is valid, with the CRC-32 and
    /// size of the inflated bytes in its trailer.
    public static func gzipBomb(inflatedSize: Int = 100 << 20, contentType: String = "image/png") -> ServedResponse {
        ServedResponse(headers: [("Content-Type", contentType), ("Content-Encoding", "gzip")], body: Deflate.gzipZeros(count: inflatedSize))
    }

    /// A decompression-bomb image: a small, well-formed PNG (valid CRCs, one
    /// row of pixel data) whose header declares `width` x `height` RGBA
    /// pixels, 100000 x 100000 unless told (40 GB decoded).
    public static func pngBomb(width: Int = 100_000, height: Int = 100_000) -> ServedResponse {
        ok(PNGBomb.bytes(width: width, height: height), contentType: "image/png")
    }

    /// Routes for a chain of `count` redirects: `prefix/1` redirects to
    /// `prefix/2`, and so on, and `prefix/count` to `destination`. A request
    /// for `prefix/1` follows `count` redirects.
    public static func redirectChain(_ count: Int, prefix: String, to destination: String, status: Int = 302) -> [String: ServedResponse] {
        var routes: [String: ServedResponse] = [:]
        for index in 1...max(1, count) {
            routes["\(prefix)/\(index)"] = redirect(to: index == count ? destination : "\(prefix)/\(index + 1)", status: status)
        }
        return routes
    }

    /// Routes for a redirect loop of `count` paths: `prefix/1` to `prefix/2`,
    /// …, `prefix/count` back to `prefix/1` (`count` 1 redirects to itself).
    public static func redirectLoop(_ count: Int, prefix: String, status: Int = 302) -> [String: ServedResponse] {
        redirectChain(count, prefix: prefix, to: "\(prefix)/1", status: status)
    }

    /// An image whose bytes change while its `ETag` stays `etag`: a request
    /// whose `If-None-Match` names the ETag gets a `304`; any other gets a
    /// `200` with `body(n)`, `n` counting those 200s from 0, and the same ETag.
    public static func sameETagNewBytes(
        etag: String = "\"stable\"",
        contentType: String = "image/png",
        cacheControl: String? = "no-cache",
        body: @escaping @Sendable (Int) -> Data
    ) -> LoopbackServer.Responder {
        let served = SharedState.Locked(0)
        return { request in
            var headers: [(name: String, value: String)] = [("ETag", etag)]
            if let cacheControl { headers.append(("Cache-Control", cacheControl)) }
            let named = request.header("If-None-Match")?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } ?? []
            if named.contains(etag) || named.contains("*") {
                return ServedResponse(status: 304, headers: headers)
            }
            let count = served.withLock { count in
                defer { count += 1 }
                return count
            }
            return ServedResponse(headers: [("Content-Type", contentType)] + headers, body: body(count))
        }
    }

    /// The same response with `Content-Length: length`, whatever the body's size.
    public func declaringLength(_ length: Int) -> ServedResponse {
        withHeader("Content-Length", String(length))
    }

    /// The same response with `Content-Type: type`, or none for `nil`: to
    /// serve image bytes as `text/html`, say.
    public func withContentType(_ type: String?) -> ServedResponse {
        guard let type else { return withoutHeader("Content-Type") }
        return withHeader("Content-Type", type)
    }

    /// The same response with the header `name` set to `value` (replacing any).
    public func withHeader(_ name: String, _ value: String) -> ServedResponse {
        var copy = withoutHeader(name)
        copy.headers.append((name, value))
        return copy
    }

    private func withoutHeader(_ name: String) -> ServedResponse {
        var copy = self
        copy.headers.removeAll { $0.name.caseInsensitiveCompare(name) == .orderedSame }
        return copy
    }
}

/// CRC-32 (IEEE, as in gzip and PNG).
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    /// The CRC-32 of `bytes`.
    static func of<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return ~crc
    }

    /// The CRC-32 of `count` zero bytes, in O(log count): feeding a zero
    /// bit to the CRC register is linear, so its `8 * count`-th power is
    /// found by squaring a 32 x 32 bit matrix.
    static func ofZeros(count: Int) -> UInt32 {
        // Column i: where the register's bit i goes when a zero bit is fed in.
        var byteStep: [UInt32] = [0xEDB8_8320] + (1..<32).map { UInt32(1) << ($0 - 1) }
        for _ in 0..<3 { byteStep = square(byteStep) }
        var register: UInt32 = 0xFFFF_FFFF
        var remaining = count
        while remaining > 0 {
            if remaining & 1 == 1 { register = apply(byteStep, to: register) }
            byteStep = square(byteStep)
            remaining >>= 1
        }
        return ~register
    }

    private static func apply(_ matrix: [UInt32], to vector: UInt32) -> UInt32 {
        var result: UInt32 = 0
        for bit in 0..<32 where vector >> bit & 1 == 1 { result ^= matrix[bit] }
        return result
    }

    private static func square(_ matrix: [UInt32]) -> [UInt32] {
        matrix.map { apply(matrix, to: $0) }
    }
}

/// Hand-built deflate streams of zeros (RFC 1951), about 1000:1.
public enum Deflate {
    /// A gzip file (RFC 1952) of `data` in stored (uncompressed) deflate
    /// blocks: what a source sends with `Content-Encoding: gzip`, made
    /// without a compressor.
    public static func gzipStored(_ data: Data) -> Data {
        var gzip = Data([0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3])
        var offset = 0
        repeat {
            let length = min(65_535, data.count - offset)
            let last = offset + length == data.count
            gzip.append(last ? 1 : 0)
            gzip.append(contentsOf: [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8((~length >> 8) & 0xFF)])
            gzip.append(data[data.startIndex + offset ..< data.startIndex + offset + length])
            offset += length
        } while offset < data.count
        appendLittleEndian(CRC32.of(data), to: &gzip)
        appendLittleEndian(UInt32(truncatingIfNeeded: data.count), to: &gzip)
        return gzip
    }

    /// A gzip file (RFC 1952) of `count` zero bytes.
    static func gzipZeros(count: Int) -> Data {
        var data = Data([0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3])   // deflate, no flags, no time, Unix
        data.append(rawZeros(count: count))
        appendLittleEndian(CRC32.ofZeros(count: count), to: &data)
        appendLittleEndian(UInt32(truncatingIfNeeded: count), to: &data)
        return data
    }

    /// A zlib stream (RFC 1950) of `count` zero bytes.
    static func zlibZeros(count: Int) -> Data {
        var data = Data([0x78, 0x01])
        data.append(rawZeros(count: count))
        // Adler-32 of zeros: a stays 1, b adds 1 per byte.
        let adler = UInt32(count % 65_521) << 16 | 1
        data.append(contentsOf: [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: adler >> $0) })
        return data
    }

    /// One final block with a dynamic Huffman code of three literal/length
    /// symbols (literal 0, end of block, length 258) and distance 1: a zero,
    /// then each further 258 zeros cost two bits.
    static func rawZeros(count: Int) -> Data {
        var bits = BitWriter()
        bits.write(1, count: 1)          // BFINAL
        bits.write(2, count: 2)          // BTYPE 10: dynamic Huffman
        bits.write(286 - 257, count: 5)  // HLIT: literal/length codes 0...285
        bits.write(2 - 1, count: 5)      // HDIST: distance codes 0 and 1
        bits.write(18 - 4, count: 4)     // HCLEN: 18 code-length code lengths
        // Code-length code: 18 -> "0", 1 -> "10", 2 -> "11", in the order
        // 16 17 18 0 8 7 9 6 10 5 11 4 12 3 13 2 14 1.
        for length in [0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2] { bits.write(UInt32(length), count: 3) }
        // Code lengths: literal 0 -> 2, 1...255 -> 0, 256 -> 2, 257...284 -> 0,
        // 285 -> 1; distances 0 and 1 -> 1.
        bits.code(0b11, length: 2)
        bits.code(0, length: 1); bits.write(138 - 11, count: 7)
        bits.code(0, length: 1); bits.write(117 - 11, count: 7)
        bits.code(0b11, length: 2)
        bits.code(0, length: 1); bits.write(28 - 11, count: 7)
        for _ in 0..<3 { bits.code(0b10, length: 2) }
        // Data. Literal/length code: 285 -> "0", literal 0 -> "10", 256 -> "11";
        // distance code 0 -> "0".
        if count > 0 {
            bits.code(0b10, length: 2)
            let matches = (count - 1) / 258
            bits.skipZeros(2 * matches)
            for _ in 0..<(count - 1) % 258 { bits.code(0b10, length: 2) }
        }
        bits.code(0b11, length: 2)
        return bits.finish()
    }

    private static func appendLittleEndian(_ value: UInt32, to data: inout Data) {
        data.append(contentsOf: [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: value >> $0) })
    }
}

/// Packs bits least significant first, as deflate does.
private struct BitWriter {
    private var bytes: [UInt8] = []
    private var current: UInt8 = 0
    private var used = 0

    /// Writes the low `count` bits of `value`, least significant first.
    mutating func write(_ value: UInt32, count: Int) {
        for bit in 0..<count { push(UInt8(value >> bit & 1)) }
    }

    /// Writes a Huffman code, most significant bit first.
    mutating func code(_ code: UInt32, length: Int) {
        for bit in stride(from: length - 1, through: 0, by: -1) { push(UInt8(code >> bit & 1)) }
    }

    /// Writes `count` zero bits.
    mutating func skipZeros(_ count: Int) {
        var remaining = count
        while remaining > 0 && used != 0 { push(0); remaining -= 1 }
        bytes.append(contentsOf: repeatElement(0, count: remaining / 8))
        for _ in 0..<remaining % 8 { push(0) }
    }

    /// The bytes, the last one padded with zeros.
    mutating func finish() -> Data {
        if used > 0 { bytes.append(current) }
        current = 0
        used = 0
        return Data(bytes)
    }

    private mutating func push(_ bit: UInt8) {
        current |= bit << used
        used += 1
        if used == 8 {
            bytes.append(current)
            current = 0
            used = 0
        }
    }
}

/// A PNG whose header promises an enormous image.
enum PNGBomb {
    static func bytes(width: Int, height: Int) -> Data {
        var data = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        var header = Data()
        for value in [UInt32(clamping: width), UInt32(clamping: height)] {
            header.append(contentsOf: [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) })
        }
        header.append(contentsOf: [8, 6, 0, 0, 0])   // 8 bits, RGBA, deflate, no filter, not interlaced
        appendChunk("IHDR", header, to: &data)
        // The first row of pixels (filter byte and zeros), so the data starts as it should.
        appendChunk("IDAT", Deflate.zlibZeros(count: 1 + 4 * max(1, min(width, 1 << 20))), to: &data)
        appendChunk("IEND", Data(), to: &data)
        return data
    }

    private static func appendChunk(_ type: String, _ body: Data, to data: inout Data) {
        let length = UInt32(body.count)
        data.append(contentsOf: [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: length >> $0) })
        let typed = Data(type.utf8) + body
        data.append(typed)
        let crc = CRC32.of(typed)
        data.append(contentsOf: [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: crc >> $0) })
    }
}
