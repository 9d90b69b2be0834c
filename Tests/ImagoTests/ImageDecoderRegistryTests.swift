import Foundation
import Imago
import ImagoTesting
import Testing

@Suite struct ImageDecoderRegistryTests {
    let png = MockImageDecoder(returning: TestImages.solid(width: 1, height: 1))
    let jpeg = MockImageDecoder(returning: TestImages.solid(width: 2, height: 2))
    let registry: ImageDecoderRegistry

    init() {
        registry = ImageDecoderRegistry([.png: png, .jpeg: jpeg])
    }

    @Test func dispatchesToTheDecoderForTheSniffedFormat() throws {
        let options = ImageDecodingOptions(frameIndex: 1)
        let image = try registry.decode(TestImages.jpegSignature, options: options)
        #expect(image.width == 2)
        #expect(jpeg.calls.map(\.options) == [options])
        #expect(png.calls.isEmpty)
    }

    @Test(arguments: [Data(), Data("<html>".utf8)])
    func unknownBytesFailAsUnsupportedWithoutCallingADecoder(data: Data) throws {
        let error = try #require(throws: ImageDecodingError.self) { try registry.decode(data) }
        #expect(error.code == .unsupportedFormat)
        #expect(error.format == nil)
        #expect(png.calls.isEmpty && jpeg.calls.isEmpty)
    }

    @Test func knownFormatWithoutADecoderFailsAsUnsupported() throws {
        let error = try #require(throws: ImageDecodingError.self) { try registry.decode(TestImages.gifSignature) }
        #expect(error.code == .unsupportedFormat)
        #expect(error.format == .gif)
        #expect(registry.supportedFormats == [.png, .jpeg])
    }

    @Test func decoderErrorsPassThroughUnchanged() throws {
        let original = IdentityError()
        png.setResult(.failure(original))
        let error = try #require(throws: IdentityError.self) { try registry.decode(TestImages.pngSignature) }
        #expect(error === original)
    }
}
