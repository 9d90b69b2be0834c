#if Server && os(Linux)
import ImageFixtures
import Imago
import ImagoServer
import Testing

/// The server's processing, pixel for pixel: each path's result on a fixed
/// source has the digest it had when the operations lived in the server.
/// The operations moved into the library (canvas, flatten, sharpen,
/// pixelate, rotate, flip, trim, crop, composite); a change of clamp or
/// rounding in any of them changes a digest here. A digest that changes
/// on purpose is recorded again, with the reason in the commit.
@Suite struct ProcessingGoldenTests {
    /// The kind of source a case starts from.
    enum Source: String, Sendable {
        /// ``Fixture/photo(width:height:)`` at 300x200, opaque RGBA.
        case photo
        /// The photo framed in 20 px of white (as `DeadlineTests.framed`).
        case framed
        /// The photo with a transparent left quarter and a half-transparent band.
        case transparent
        /// The photo as gray8.
        case gray
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let options: String
        let source: Source
        let digest: UInt64
        var testDescription: String { "\(options) on \(source.rawValue)" }
    }

    static let cases: [Case] = [
        Case(options: "t:10", source: .framed, digest: 0x9ded7ad56f6189c4),
        Case(options: "t:30:ff00ff", source: .transparent, digest: 0x83458930ca6cc419),
        Case(options: "t:10:fff:1:1", source: .framed, digest: 0x9ded7ad56f6189c4),
        Case(options: "rot:90/fl:1", source: .photo, digest: 0x253ee557d3ca7ae4),
        Case(options: "rot:180/fl:1:1", source: .photo, digest: 0x9ded7ad56f6189c4),
        Case(options: "rot:270", source: .gray, digest: 0x10d4094217d84444),
        Case(options: "c:0.5:0.5:sm", source: .photo, digest: 0xff25f47250e0d4eb),
        Case(options: "c:120:80:fp:0.8:0.3", source: .photo, digest: 0x39e3ba1bcc8586dd),
        Case(options: "c:120:80:soea:5:7", source: .photo, digest: 0xb46e95123ed93c3d),
        Case(options: "rs:fill:100:100/g:sm", source: .photo, digest: 0xc4a35586b493d879),
        Case(options: "rs:fill:100:100/g:soea:5:7", source: .photo, digest: 0x6adf0777dce70845),
        Case(options: "rs:fill:100:100/g:fp:0.8:0.3", source: .photo, digest: 0x4837ee709d075b2d),
        Case(options: "rs:fill:100:100/g:we:0.1:0", source: .photo, digest: 0x2f505838993cfce1),
        Case(options: "bl:3", source: .photo, digest: 0x2916f6baa0ea751c),
        Case(options: "sh:1.5", source: .photo, digest: 0x22c6be9df1963050),
        Case(options: "sh:0.3", source: .transparent, digest: 0xabd7001d6a977eac),
        Case(options: "sh:2", source: .gray, digest: 0x999e72e51c1051ad),
        Case(options: "pix:7", source: .photo, digest: 0x29e6ac936490ab8c),
        Case(options: "pix:5", source: .transparent, digest: 0xf404cd5a104a6b28),
        Case(options: "rs:fit:400:400/ex:1:soea:5:5/bg:0:128:255", source: .photo, digest: 0x6a86170bffdd8d99),
        Case(options: "rs:fit:400:400/ex:1:no", source: .transparent, digest: 0x321434d3c0126d61),
        Case(options: "exar:1:no/rs:fill:300:100/el:1", source: .photo, digest: 0x162fedadff8e8d68),
        Case(options: "pd:3:4:5:6/bg:fff/dpr:2", source: .photo, digest: 0x943977bcee70a81e),
        Case(options: "pd:3:4:5:6", source: .photo, digest: 0xfca03c3ef50f7f9e),
        Case(options: "ex:1/rs:fit:400:300/bg:808080", source: .gray, digest: 0xeef3a26cbbc259ed),
        Case(options: "ex:1/rs:fit:400:300/bg:ff0000", source: .gray, digest: 0x6af14c63530f3c2d),
        Case(options: "ex:1/rs:fit:400:300", source: .gray, digest: 0xc6db0169612596a9),
        Case(options: "bg:102030", source: .transparent, digest: 0x904a6e55d311dbf4),
        Case(options: "wm:0.6:soea:10:7:0.25", source: .photo, digest: 0x9e8a8145dfdadd96),
        Case(options: "wm:1:re:5:5:0.1", source: .photo, digest: 0x873fd3970597e6d4),
        Case(options: "wm:0.5:we:-15:0", source: .photo, digest: 0x549cb653370c0ada),
        Case(options: "wm:0.8:nowe:0.1:0.2:0.5", source: .transparent, digest: 0x2d96bd3b01280323),
        Case(options: "wm:1:ce/pd:10", source: .gray, digest: 0x66a3f43d1d3d7204),
    ]

    /// A 9x6 mark with soft alpha.
    static let mark = Image(width: 9, height: 6, pixelFormat: .rgba8,
                            pixels: (0..<216).map { UInt8(($0 * 53 + 17) % 256) })

    static func source(_ kind: Source) -> Image {
        let photo = Fixture.photo(width: 300, height: 200)
        switch kind {
        case .photo: return photo
        case .framed: return ProcessingFixtures.framed(photo)
        case .gray: return photo.converted(to: .gray8)
        case .transparent:
            var pixels = photo.pixels
            for y in 0..<200 {
                for x in 0..<300 {
                    let alpha: UInt8 = x < 75 ? 0 : (y >= 80 && y < 120) ? 128 : 255
                    pixels[(y * 300 + x) * 4 + 3] = alpha
                }
            }
            return Image(width: 300, height: 200, pixelFormat: .rgba8, pixels: pixels)
        }
    }

    /// FNV-1a 64 over the size, the pixel format and the pixels.
    static func digest(_ image: Image) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func add(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        for value in [image.width, image.height] {
            for shift in stride(from: 0, to: 64, by: 8) { add(UInt8(truncatingIfNeeded: value >> shift)) }
        }
        for byte in "\(image.pixelFormat)".utf8 { add(byte) }
        let packed = image.converted(to: image.pixelFormat)
        for byte in packed.pixels.prefix(packed.width * packed.height * packed.pixelFormat.bytesPerPixel) { add(byte) }
        return hash
    }

    @Test(arguments: cases)
    func theResultHasItsRecordedDigest(_ golden: Case) throws {
        let options = try ImageServerPath(parsing: "/insecure/\(golden.options)/plain/http%3A%2F%2Fx%2Fa.png").options
        let result = options.apply(to: Self.source(golden.source), watermark: Self.mark)
        let digest = Self.digest(result)
        #expect(digest == golden.digest,
                "\(golden.testDescription): 0x\(String(digest, radix: 16)) (\(result.width)x\(result.height) \(result.pixelFormat))")
    }
}
#endif
