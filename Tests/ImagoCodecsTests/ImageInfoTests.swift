import Foundation
import Imago
import ImagoCodecs
import Testing

/// What a header read tells: the profile's name (ICC v2 `desc` and v4
/// `mluc` forms, the same as Little CMS reports through Pillow) and the
/// EXIF orientation.
@Suite struct ImageInfoTests {
    @Test(arguments: [
        ("color/display-p3.icc", "Display P3 (Imago test)"),
        ("color/adobe-rgb.icc", "Adobe RGB (1998) compatible (Imago test)"),
        ("color/prophoto-big.icc", "ProPhoto RGB, with target data (Imago test)"),
        ("color/gray.icc", "Gray 2.2 (Imago test)"),
        ("color/srgb-v4.icc", "sRGB built-in"),
    ])
    func profileNamesAreTheDescriptionTag(_ path: String, _ name: String) throws {
        #expect(ColorProfile(data: try Fixtures.data(path)).name == name)
    }

    @Test func aDamagedProfileHasNoName() {
        #expect(ColorProfile(data: Data(count: 10)).name == nil)
        #expect(ColorProfile(data: Data(repeating: 0xFF, count: 200)).name == nil)
    }

    @Test(arguments: [("jpeg/orientation6.jpg", ImageFormat.jpeg, 6), ("jpeg/orientation1.jpg", .jpeg, 1),
                      ("color/orientation8.png", .png, 8), ("color/orientation3.webp", .webp, 3)])
    func infoReportsTheOrientation(_ path: String, _ format: ImageFormat, _ orientation: Int) throws {
        let data = try Fixtures.data(path)
        let decoder = try #require(ImageDecoders.all.decoders[format] as? CodecDecoder)
        let info = try decoder.info(for: data)
        #expect(info.orientation.rawValue == orientation)
        // The decoded image is shown upright: its sides swap for orientations 5 to 8.
        let image = try ImageDecoders.all.decode(data)
        #expect(info.orientation.swapsDimensions ? (image.width, image.height) == (info.height, info.width)
                                                 : (image.width, image.height) == (info.width, info.height))
    }
}

/// Crafted profiles: a name is read only from inside the bytes, and is short.
@Suite struct HostileProfileNameTests {
    /// A profile header of 128 bytes, then a tag table with one `desc` entry.
    static func profile(tagOffset: UInt32, tagSize: UInt32, tag: [UInt8], count: UInt32 = 1) -> Data {
        var bytes = [UInt8](repeating: 0, count: 128)
        func be(_ value: UInt32) -> [UInt8] { [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        bytes += be(count) + Array("desc".utf8) + be(tagOffset) + be(tagSize)
        bytes += tag
        return Data(bytes)
    }

    @Test func offsetsAndSizesPastTheEndGiveNoName() {
        let text = Array("desc".utf8) + [0, 0, 0, 0, 0, 0, 0, 5] + Array("Hello".utf8)
        #expect(ColorProfile(data: Self.profile(tagOffset: 144, tagSize: UInt32(text.count), tag: text)).name == "Hello")
        #expect(ColorProfile(data: Self.profile(tagOffset: 0xFFFF_FFF0, tagSize: 0x20, tag: text)).name == nil)
        #expect(ColorProfile(data: Self.profile(tagOffset: 144, tagSize: 0xFFFF_FFFF, tag: text)).name == nil)
        let lying = Array("desc".utf8) + [0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF] + Array("Hello".utf8)
        #expect(ColorProfile(data: Self.profile(tagOffset: 144, tagSize: UInt32(lying.count), tag: lying)).name == nil)
        #expect(ColorProfile(data: Self.profile(tagOffset: 144, tagSize: 12, tag: text, count: 0xFFFF_FFFF)).name == nil)
    }

    @Test func aLongNameIsCut() {
        let long = [UInt8](repeating: 0x41, count: 10_000)
        let text = Array("desc".utf8) + [0, 0, 0, 0, 0, 0, 0x27, 0x10] + long
        #expect(ColorProfile(data: Self.profile(tagOffset: 144, tagSize: UInt32(text.count), tag: text)).name?.count == 256)
    }
}
