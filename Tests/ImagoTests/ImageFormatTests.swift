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
}
