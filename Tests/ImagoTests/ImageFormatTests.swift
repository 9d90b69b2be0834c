import Foundation
import Imago
import ImagoTesting
import Testing

@Suite struct ImageFormatTests {
    @Test(arguments: [
        (TestImages.jpegSignature, ImageFormat.jpeg),
        (TestImages.pngSignature, .png),
        (Data("GIF87a".utf8), .gif),
        (TestImages.gifSignature, .gif),
        (TestImages.webpSignature, .webp),
    ])
    func sniffsEachFormatFromItsMagicNumber(data: Data, format: ImageFormat) {
        #expect(ImageFormat(sniffing: data) == format)
    }

    @Test(arguments: [
        Data(),
        Data([0xFF, 0xD8]),
        Data("<html><body>not found</body></html>".utf8),
        Data("RIFF\u{0}\u{0}\u{0}\u{0}WAVEfmt ".utf8),
        Data("GIF90a".utf8),
    ])
    func unknownOrShortBytesAreNotAFormat(data: Data) {
        #expect(ImageFormat(sniffing: data) == nil)
    }

    @Test func sniffingReadsOnlyTheFirstBytes() {
        var data = TestImages.pngSignature
        data.append(Data(repeating: 0, count: 1_000_000))
        #expect(ImageFormat(sniffing: data) == .png)
    }

    @Test func mimeTypesAndExtensions() {
        #expect(ImageFormat.jpeg.mimeType == "image/jpeg")
        #expect(ImageFormat.jpeg.fileExtension == "jpg")
        #expect(ImageFormat.webp.mimeType == "image/webp")
        #expect(ImageFormat.png.fileExtension == "png")
    }

    @Test(arguments: [
        (Data([0x42, 0x4D, 0x3A, 0, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0, 40, 0, 0, 0]), ImageFormat.bmp),
        (Data([0x42, 0x4D, 0x3A, 0, 0, 0, 0, 0, 0, 0, 0x1A, 0, 0, 0, 12, 0, 0, 0]), .bmp),
        (Data([0x42, 0x4D, 0, 0, 0, 0]), .bmp),
        (Data([0, 0, 1, 0, 1, 0, 16, 16]), .ico),
        (Data("II*\u{0}\u{8}\u{0}\u{0}\u{0}".utf8), .tiff),
        (Data("MM\u{0}*\u{0}\u{0}\u{0}\u{8}".utf8), .tiff),
        (Data("II+\u{0}\u{8}\u{0}\u{0}\u{0}".utf8), .tiff),
    ])
    func sniffsBMPIconsAndTIFF(data: Data, format: ImageFormat) {
        #expect(ImageFormat(sniffing: data) == format)
    }

    @Test(arguments: [
        Data("BM is not a bitmap, here: a text".utf8),            // a DIB header size no writer uses
        Data([0, 0, 1, 0, 0, 0, 16, 16]),                          // an icon of no images
        Data([0, 0, 2, 0, 1, 0]),                                  // a cursor
        Data("II*".utf8),
    ])
    func lookalikesOfTheNewFormatsAreNot(data: Data) {
        #expect(ImageFormat(sniffing: data) == nil)
    }

    @Test func theNewFormatsNamesExtensionsAndMIMETypes() {
        #expect(ImageFormat.bmp.mimeType == "image/bmp" && ImageFormat.bmp.fileExtension == "bmp")
        #expect(ImageFormat.ico.mimeType == "image/x-icon" && ImageFormat.ico.fileExtension == "ico")
        #expect(ImageFormat.tiff.mimeType == "image/tiff" && ImageFormat.tiff.fileExtension == "tiff")
        #expect(ImageFormat(fileExtension: "TIF") == .tiff && ImageFormat(fileExtension: ".tiff") == .tiff)
        #expect(ImageFormat(fileExtension: "ico") == .ico && ImageFormat(fileExtension: "bmp") == .bmp)
        #expect(ImageFormat(fileExtension: "jpeg") == .jpeg && ImageFormat(fileExtension: "heif") == .heic)
        #expect(ImageFormat(fileExtension: "txt") == nil)
        #expect(ImageFormat(mimeType: "image/vnd.microsoft.icon") == .ico && ImageFormat(mimeType: "IMAGE/X-ICON") == .ico)
        #expect(ImageFormat(mimeType: "image/x-ms-bmp") == .bmp && ImageFormat(mimeType: "image/tiff; charset=binary") == .tiff)
        #expect(ImageFormat(mimeType: "text/html") == nil)
        for format in ImageFormat.allCases {
            #expect(ImageFormat(mimeType: format.mimeType) == format && ImageFormat(fileExtension: format.fileExtension) == format)
        }
    }
}
