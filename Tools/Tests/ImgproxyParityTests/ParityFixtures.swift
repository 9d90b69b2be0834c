import FaultInjection
import Foundation
import Imago
import ImagoCodecs
import ImagoTesting

/// The source images the cases name, made here (no binary files in the
/// repository), with the names and sizes of imgproxy's test data.
enum ParityFixtures {
    /// Every fixture by file name.
    static func all() throws -> [String: Data] {
        let small = TestImages.gradient(width: 10, height: 10)
        let smallRGB = rgb(small)
        var files: [String: Data] = [
            "test1.png": try ImageEncoders.png().encode(smallRGB),
            "test1.jpg": try ImageEncoders.jpeg(quality: 90).encode(smallRGB),
            "test2.jpg": try ImageEncoders.jpeg(quality: 90).encode(rgb(TestImages.gradient(width: 20, height: 10))),
            "test1.webp": try ImageEncoders.webp(quality: 90).encode(small),
            "test1.avif": try ImageEncoders.avif(quality: 80).encode(smallRGB),
            "test1.gif": try GIFEncoder().encode(smallRGB),
            "geometry.png": try ImageEncoders.png().encode(rgb(TestImages.gradient(width: 200, height: 100))),
            "big.png": try ImageEncoders.png().encode(rgb(TestImages.gradient(width: 2000, height: 2000))),
            "trim1.png": try ImageEncoders.png().encode(framed(width: 350, height: 250)),
            "animated.gif": try animation(),
            "test1.bmp": bmp(smallRGB),
            "test1.ico": ico(png: try ImageEncoders.png().encode(small), side: 10),
            "test1.tiff": tiff(smallRGB),
            "test1.jxl": try ImageEncoders.jxl(quality: 90).encode(smallRGB),
            "test1.heic": try ImageEncoders.encoder(for: .heic, quality: 90)!.encode(smallRGB),
            // imgproxy's test-images/jpg/jpg.jpg: a 600x800 photo of about 45 KB.
            "test-images/jpg/jpg.jpg": try ImageEncoders.jpeg(quality: 90).encode(rgb(TestImages.gradient(width: 600, height: 800))),
            "bmp-invalid-bpp.bmp": invalidDepthBMP(),
            "notimage.txt": Data("this is not an image\n".utf8),
            "test1.svg": Data(svg.utf8),
        ]
        files["test1.jpg.gz"] = Deflate.gzipStored(files["test1.jpg"]!)
        for orientation in 1...8 {
            files["orientation-\(orientation).png"] = try ImageEncoders.png().encode(TestImages.gradient(width: 200, height: 100))
        }
        return files
    }

    /// A document with what imgproxy's sanitiser removes: a script, handlers.
    static let svg = """
    <svg width="200" height="100" xmlns="http://www.w3.org/2000/svg" onload="alert(1)">
      <rect onclick="alert(2)" width="190" height="90" style="fill:rgb(0,0,0);stroke-width:5;stroke:rgb(255,255,255)"/>
      <script>alert(3)</script>
    </svg>
    """

    static func rgb(_ image: Image) -> Image { image.converted(to: .rgb8) }

    /// A red square on a white field, for trim.
    static func framed(width: Int, height: Int) -> Image {
        var pixels = [UInt8](repeating: 255, count: width * height * 3)
        for y in 50..<height - 50 {
            for x in 50..<width - 50 {
                pixels[(y * width + x) * 3 + 1] = 0
                pixels[(y * width + x) * 3 + 2] = 0
            }
        }
        return Image(width: width, height: height, pixelFormat: .rgb8, pixels: pixels)
    }

    /// Four frames of 20x20.
    static func animation() throws -> Data {
        let writer = try GIFAnimationEncoder().makeWriter(width: 20, height: 20, loopCount: 0)
        for shade in [0, 80, 160, 240] {
            try writer.add(TestImages.solid(width: 20, height: 20, red: UInt8(shade), green: 0, blue: 0), duration: 0.1)
        }
        return try writer.finish()
    }

    /// An uncompressed 24-bit Windows bitmap, bottom-up.
    static func bmp(_ image: Image) -> Data {
        let rowBytes = (image.width * 3 + 3) / 4 * 4
        let size = 54 + rowBytes * image.height
        var data = Data("BM".utf8)
        func u32(_ value: Int) { data += withUnsafeBytes(of: UInt32(value).littleEndian) { Data($0) } }
        func u16(_ value: Int) { data += withUnsafeBytes(of: UInt16(value).littleEndian) { Data($0) } }
        u32(size); u32(0); u32(54)
        u32(40); u32(image.width); u32(image.height); u16(1); u16(24); u32(0); u32(rowBytes * image.height); u32(2835); u32(2835); u32(0); u32(0)
        for y in (0..<image.height).reversed() {
            var row = Data(count: rowBytes)
            for x in 0..<image.width {
                let source = (y * image.width + x) * 3
                row[x * 3] = image.pixels[source + 2]
                row[x * 3 + 1] = image.pixels[source + 1]
                row[x * 3 + 2] = image.pixels[source]
            }
            data += row
        }
        return data
    }

    /// A 512x1 bitmap that says 7 bits per pixel, which no BMP has.
    static func invalidDepthBMP() -> Data {
        var data = bmp(Image(width: 512, height: 1, pixelFormat: .rgb8, pixels: [UInt8](repeating: 90, count: 512 * 3)))
        data[28] = 7
        return data
    }

    /// An icon holding one PNG image.
    static func ico(png: Data, side: Int) -> Data {
        var data = Data([0, 0, 1, 0, 1, 0])
        data += [UInt8(side), UInt8(side), 0, 0, 1, 0, 32, 0]
        data += withUnsafeBytes(of: UInt32(png.count).littleEndian) { Data($0) }
        data += withUnsafeBytes(of: UInt32(22).littleEndian) { Data($0) }
        return data + png
    }

    /// A baseline TIFF: little-endian, one strip of uncompressed RGB.
    static func tiff(_ image: Image) -> Data {
        let entries: [(tag: UInt16, type: UInt16, count: UInt32, value: UInt32)] = [
            (256, 4, 1, UInt32(image.width)), (257, 4, 1, UInt32(image.height)),
            (258, 3, 3, 0),                       // bits per sample: points at 8,8,8 below
            (259, 3, 1, 1), (262, 3, 1, 2),       // no compression, RGB
            (273, 4, 1, 0),                       // strip offset: filled below
            (277, 3, 1, 3), (278, 4, 1, UInt32(image.height)), (279, 4, 1, UInt32(image.pixels.count)),
        ]
        let ifdSize = 2 + entries.count * 12 + 4
        let bitsOffset = 8 + ifdSize
        let pixelsOffset = bitsOffset + 6
        var data = Data([0x49, 0x49, 42, 0])
        func u32(_ value: UInt32) { data += withUnsafeBytes(of: value.littleEndian) { Data($0) } }
        func u16(_ value: UInt16) { data += withUnsafeBytes(of: value.littleEndian) { Data($0) } }
        u32(8)
        u16(UInt16(entries.count))
        for entry in entries {
            u16(entry.tag); u16(entry.type); u32(entry.count)
            switch entry.tag {
            case 258: u32(UInt32(bitsOffset))
            case 273: u32(UInt32(pixelsOffset))
            default:
                if entry.type == 3 {
                    u16(UInt16(entry.value)); u16(0)
                } else {
                    u32(entry.value)
                }
            }
        }
        u32(0)
        u16(8); u16(8); u16(8)
        return data + image.pixels
    }
}
