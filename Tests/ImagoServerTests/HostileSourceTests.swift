#if Server && os(Linux)
import Foundation
import HummingbirdTesting
import Imago
import ImagoCodecs
import HostileInputs
import ImagoServer
import ImagoSVG
import Testing

/// Sources built to cost far more than their bytes: thousands of scans,
/// grids of thousands of tiles, metadata of megabytes. Each is refused or
/// cut down before it costs anything.
@Suite struct HostileSourceTests {
    @Test func metadataOverItsLimitIsNotCopiedIntoTheResult() async throws {
        let small = try ImageEncoders.png().encode(Fixture.photo(width: 8, height: 8))
        let bombed = HostileInputs.inserting("eXIf", HostileInputs.exif(copyrightLength: 2_000_000), into: small)
        let modest = HostileInputs.inserting("eXIf", HostileInputs.exif(copyrightLength: 40), into: small)
        let origin = try await Fixture.origin([
            "/bombed.png": .ok(bombed, contentType: "image/png"),
            "/modest.png": .ok(modest, contentType: "image/png"),
        ])
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            // Default options keep the copyright: a modest one is kept, a bomb is not copied at all.
            for options in ["w:8", "w:8/sm:0"] {
                let kept = try await client.execute(uri: Fixture.path(options, origin.url("/modest.png"), extension: "png"), method: .get)
                #expect(kept.status == .ok)
                #expect(HostileInputs.hasChunk("eXIf", in: kept.data), "\(options): a modest EXIF is kept")
                let dropped = try await client.execute(uri: Fixture.path(options, origin.url("/bombed.png"), extension: "png"), method: .get)
                #expect(dropped.status == .ok)
                #expect(!HostileInputs.hasChunk("eXIf", in: dropped.data), "\(options): a 2 MB EXIF is not copied")
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
        let size = profile.count + 2_000_000
        var large = source
        large.colorProfile = ColorProfile(data: HostileInputs.padded(profile, to: size))
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

    @Test func aProgressiveJPEGOfThousandsOfScansIs422BeforeDecoding() async throws {
        let jpeg = try ImageEncoders.jpeg(quality: 85).encode(Fixture.photo(width: 64, height: 48))
        let scans = try HostileInputs.progressiveJPEG(extraScans: 3_000)
        let origin = try await Fixture.origin([
            "/scans.jpg": .ok(scans, contentType: "image/jpeg"),
            "/plain.jpg": .ok(jpeg, contentType: "image/jpeg"),
        ])
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let refused = try await client.execute(uri: Fixture.path("w:20", origin.url("/scans.jpg")), method: .get)
            #expect(refused.status == .unprocessableContent)
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
#endif
