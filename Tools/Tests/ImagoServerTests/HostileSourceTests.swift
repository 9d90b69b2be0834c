import Foundation
import HummingbirdTesting
import Imago
import ImagoCodecs
import ImagoServer
import Testing

/// Sources built to cost far more than their bytes: thousands of scans,
/// grids of thousands of tiles, metadata of megabytes. Each is refused or
/// cut down before it costs anything.
@Suite struct HostileSourceTests {
    /// CRC-32 (ISO-HDLC), for PNG chunks.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    /// `png` with a chunk of `type` and `payload` put after `IHDR`.
    static func inserting(_ type: String, _ payload: [UInt8], into png: Data) -> Data {
        let body = Array(type.utf8) + payload
        let length = UInt32(payload.count), crc = crc32(body)
        let chunk = [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + body
            + [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
        var bytes = [UInt8](png)
        bytes.insert(contentsOf: chunk, at: 8 + 25)   // the signature, then IHDR (13 bytes of data, 12 of frame)
        return Data(bytes)
    }

    /// A big-endian TIFF (EXIF) block with one tag: `Copyright` of `count` letters.
    static func exif(copyrightLength count: Int) -> [UInt8] {
        func u16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        func u32(_ value: Int) -> [UInt8] { [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        let text = [UInt8](repeating: UInt8(ascii: "c"), count: count - 1) + [0]
        return Array("MM".utf8) + u16(42) + u32(8) + u16(1) + u16(0x8298) + u16(2) + u32(count) + u32(26) + u32(0) + text
    }

    /// Whether a PNG has a chunk of `type`.
    static func hasChunk(_ type: String, in png: Data) -> Bool {
        let bytes = [UInt8](png), name = Array(type.utf8)
        var offset = 8
        while offset + 8 <= bytes.count {
            let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            if Array(bytes[offset + 4..<offset + 8]) == name { return true }
            offset += 12 + length
        }
        return false
    }

    @Test func metadataOverItsLimitIsNotCopiedIntoTheResult() async throws {
        let small = try ImageEncoders.png().encode(Fixture.photo(width: 8, height: 8))
        let bombed = Self.inserting("eXIf", Self.exif(copyrightLength: 2_000_000), into: small)
        let modest = Self.inserting("eXIf", Self.exif(copyrightLength: 40), into: small)
        let origin = try await Fixture.origin([
            "/bombed.png": .ok(bombed, contentType: "image/png"),
            "/modest.png": .ok(modest, contentType: "image/png"),
        ])
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            // Default options keep the copyright: a modest one is kept, a bomb is not copied at all.
            for options in ["w:8", "w:8/sm:0"] {
                let kept = try await client.execute(uri: Fixture.path(options, origin.url("/modest.png"), extension: "png"), method: .get)
                #expect(kept.status == .ok)
                #expect(Self.hasChunk("eXIf", in: kept.data), "\(options): a modest EXIF is kept")
                let dropped = try await client.execute(uri: Fixture.path(options, origin.url("/bombed.png"), extension: "png"), method: .get)
                #expect(dropped.status == .ok)
                #expect(!Self.hasChunk("eXIf", in: dropped.data), "\(options): a 2 MB EXIF is not copied")
                #expect(dropped.data.count < 10_000, "\(options): an 8x8 thumbnail stays small (\(dropped.data.count) bytes)")
            }
        }
    }

    /// `scp:0` keeps the source's colour profile, but not one over
    /// `maximumKeptProfileBytes` (1 MB): the pixels are converted to sRGB with
    /// it instead, and the result is as small as any sRGB thumbnail.
    @Test func aColourProfileOverItsLimitIsNotCopied() async throws {
        let keepOriginal = { var options = ImageDecodingOptions(); options.colorManagement = .keepOriginal; return options }()
        let source = try ImageDecoders.all.decode(MetadataTests.p3, options: keepOriginal)
        let profile = try #require(source.colorProfile).data
        // The same Display P3 profile padded to 2 MB, its size field saying so (lcms reads its tags and no further).
        var padded = [UInt8](profile) + [UInt8](repeating: 0, count: 2_000_000)
        let size = padded.count
        padded.replaceSubrange(0..<4, with: [UInt8(size >> 24 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)])
        var large = source
        large.colorProfile = ColorProfile(data: Data(padded))
        let bombed = try ImageEncoders.png().encode(large)
        #expect(try ImageDecoders.all.decode(bombed, options: keepOriginal).colorProfile?.data.count == size, "the source carries the whole profile")
        let origin = try await Fixture.origin([
            "/bombed.png": .ok(bombed, contentType: "image/png"),
            "/modest.png": .ok(try ImageEncoders.png().encode(source), contentType: "image/png"),
            "/p3.jpg": .ok(MetadataTests.p3, contentType: "image/jpeg"),
        ])
        @Sendable func embeddedProfile(of data: Data) throws -> Data? { try ImageDecoders.all.decode(data, options: keepOriginal).colorProfile?.data }
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let kept = try await client.execute(uri: Fixture.path("w:8/scp:0", origin.url("/modest.png"), extension: "png"), method: .get)
            #expect(try embeddedProfile(of: kept.data) == profile, "a profile within the limit is kept")
            let dropped = try await client.execute(uri: Fixture.path("w:8/scp:0", origin.url("/bombed.png"), extension: "png"), method: .get)
            let converted = try await client.execute(uri: Fixture.path("w:8", origin.url("/bombed.png"), extension: "png"), method: .get)
            #expect(dropped.status == .ok && converted.status == .ok)
            #expect(try embeddedProfile(of: dropped.data) == nil, "a 2 MB profile is not copied")
            #expect(dropped.data.count < 10_000, "an 8 px thumbnail stays small (\(dropped.data.count) bytes)")
            #expect(try ImageDecoders.all.decode(dropped.data).pixels == ImageDecoders.all.decode(converted.data).pixels,
                    "converted to sRGB, as without scp:0")
        }
        // A lower limit, and a JPEG source: the same.
        try await Fixture.withServer(Fixture.configuration { $0.maximumKeptProfileBytes = 100 }) { client, _ in
            let dropped = try await client.execute(uri: Fixture.path("w:8/scp:0", origin.url("/p3.jpg"), extension: "jpg"), method: .get)
            let converted = try await client.execute(uri: Fixture.path("w:8", origin.url("/p3.jpg"), extension: "jpg"), method: .get)
            #expect(dropped.status == .ok)
            #expect(try embeddedProfile(of: dropped.data) == nil, "a \(profile.count)-byte profile over a 100-byte limit")
            #expect(dropped.data == converted.data)
        }
    }

    @Test func aProgressiveJPEGOfThousandsOfScansIs413BeforeDecoding() async throws {
        let jpeg = try ImageEncoders.jpeg(quality: 85).encode(Fixture.photo(width: 64, height: 48))
        // A progressive JPEG with its last scan repeated 3,000 times.
        let progressive = [UInt8](try JPEGEncoder(quality: 85, progressive: true).encode(Fixture.photo(width: 64, height: 48)))
        var lastScan = 0
        for index in 0..<progressive.count - 1 where progressive[index] == 0xFF && progressive[index + 1] == 0xDA { lastScan = index }
        let end = progressive.count - 2
        let scans = Data(progressive[..<end] + Array(repeating: Array(progressive[lastScan..<end]), count: 3_000).joined() + [0xFF, 0xD9])
        let origin = try await Fixture.origin([
            "/scans.jpg": .ok(scans, contentType: "image/jpeg"),
            "/plain.jpg": .ok(jpeg, contentType: "image/jpeg"),
        ])
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let refused = try await client.execute(uri: Fixture.path("w:20", origin.url("/scans.jpg")), method: .get)
            #expect(refused.status == .contentTooLarge)
            #expect(refused.errorCode == "source_too_large")
            #expect(try await client.execute(uri: Fixture.path("w:20", origin.url("/plain.jpg")), method: .get).status == .ok)
        }
    }

    /// libxml2 reports `<?x?>` with a NULL data pointer, which FoundationXML
    /// passed to strlen: a crash of the whole process, found by the fuzzer
    /// (Fuzz/findings/5). The sanitiser now reads with libxml2 directly,
    /// which reports no processing instruction to it: each is dropped.
    @Test func processingInstructionsWithoutDataAreDropped() async throws {
        let sanitizer = SVGSanitizer()
        let plain = try sanitizer.sanitized(Data(#"<svg xmlns="http://www.w3.org/2000/svg"><g></g></svg>"#.utf8))
        for document in [#"<svg xmlns="http://www.w3.org/2000/svg"><g><?x?></g></svg>"#, #"<?x?><svg xmlns="http://www.w3.org/2000/svg"><g/></svg>"#,
                         #"<svg xmlns="http://www.w3.org/2000/svg"><g><?xml-stylesheet?></g></svg>"#,
                         #"<svg xmlns="http://www.w3.org/2000/svg"><g><?x ?></g></svg>"#, "<svg xmlns=\"http://www.w3.org/2000/svg\"><g><?x\n\t?></g></svg>",
                         #"<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><g><?x y?></g></svg>"#] {
            #expect(try sanitizer.sanitized(Data(document.utf8)) == plain, "\(document)")
        }
        let origin = try await Fixture.origin([
            "/pi.svg": .ok(Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><?x?></svg>"#.utf8), contentType: "image/svg+xml"),
        ])
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            for ext in [nil, "png"] as [String?] {
                let served = try await client.execute(uri: Fixture.path("w:8", origin.url("/pi.svg"), extension: ext), method: .get)
                #expect(served.status == .ok, "\(ext ?? "svg"): \(served.status)")
            }
            #expect(try await client.execute(uri: Fixture.path("w:20", origin.url("/a.png")), method: .get).status == .ok)
        }
    }

    /// The fuzzer's round-trip findings (Fuzz/findings/2 to 4): what is
    /// parsed, written and parsed again is the same.
    @Test func theFuzzersRoundTripFindingsHold() throws {
        for path in ["/insecure/raw:1/f:png/plain/http%3A%2F%2Fx%2Fa.png", "/insecure/wm:1:no/wm:1:re/plain/http%3A%2F%2Fx%2Fa.png"] {
            let parsed = try ImageServerPath(parsing: path)
            let again = try ImageServerPath(parsing: parsed.path(signedWith: nil))
            #expect(again.options == parsed.options, "\(path)")
        }
        let sanitizer = SVGSanitizer()
        let once = try sanitizer.sanitized(Data(#"<svg xmlns="http://www.w3.org/2000/svg"><text>a&#13;b</text></svg>"#.utf8))
        #expect(try sanitizer.sanitized(once) == once, "a carriage return survives sanitising twice")
        // A CSS escape of a code point XML forbids stays an escape (Fuzz/findings/6): the output parses again.
        for document in [#"<svg xmlns="http://www.w3.org/2000/svg"><rect fill="\ffff"/></svg>"#,
                         #"<svg xmlns="http://www.w3.org/2000/svg"><style>a { fill: \fffe }</style><rect style="fill:'\ffff'"/></svg>"#] {
            let sanitised = try sanitizer.sanitized(Data(document.utf8))
            #expect(!String(decoding: sanitised, as: UTF8.self).unicodeScalars.contains { $0.value == 0xFFFE || $0.value == 0xFFFF })
            #expect(throws: Never.self, "\(document)") { _ = try sanitizer.sanitized(sanitised) }
        }
        // Whitespace around a comment is one space (Fuzz/findings/7), so sanitising again changes nothing.
        for document in [#"<svg xmlns="http://www.w3.org/2000/svg"><rect style="stroke-dasharray: 1 /*c*/ 2; fill: red"/></svg>"#,
                         #"<svg xmlns="http://www.w3.org/2000/svg"><style>rect { stroke-dasharray: 1 /*a*/ /*b*/  2 }</style></svg>"#] {
            let once = try sanitizer.sanitized(Data(document.utf8))
            #expect(String(decoding: once, as: UTF8.self).contains("1 2"), "\(String(decoding: once, as: UTF8.self))")
            #expect(try sanitizer.sanitized(once) == once, "\(document)")
        }
        // The finding itself (its 0xFF byte read as U+FFFD), through each of the three entry points.
        let finding = "#\u{FFFD}#url( /*c*/ ntation-1)"
        let sheet = SVGStyleSanitizer.sanitizedStyleSheet(finding), declarations = SVGStyleSanitizer.sanitizedDeclarations(finding)
        #expect(SVGStyleSanitizer.sanitizedStyleSheet(sheet) == sheet)
        #expect(SVGStyleSanitizer.sanitizedDeclarations(declarations) == declarations)
        let value = try #require(SVGStyleSanitizer.sanitizedValue(finding))
        #expect(value == "#\u{FFFD}#url( ntation-1)" && SVGStyleSanitizer.sanitizedValue(value) == value, "\(value)")
    }
}
