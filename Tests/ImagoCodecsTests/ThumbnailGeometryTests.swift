import Imago
import ImagoCodecs
import ImagoTesting
import Testing

/// A decoder's thumbnail and `Image.resized` share one ``ResizeGeometry``.
@Suite struct ThumbnailGeometryTests {
    /// The thumbnail a decoder makes is the pixels of a full decode resized
    /// by `Image.resized(toFit:height:mode:)` to the same box, for every
    /// mode, where the decoder does not scale on its own terms (PNG rows
    /// streamed; AVIF, decoded whole): one geometry for both paths.
    @Test(arguments: ResizeMode.allCases)
    func aThumbnailIsTheFullImageResized(_ mode: ResizeMode) throws {
        let source = TestImages.gradient(width: 203, height: 117)
        // Without colour conversion, which a thumbnail runs after scaling and a full decode before.
        let files = [
            (try ImageEncoders.png().encode(source), ImageDecoders.png(functions: .png, colorConversion: nil)),
            (try ImageEncoders.avif(quality: 80, speed: 9).encode(source), ImageDecoders.avif(functions: .avif, colorConversion: nil)),
        ]
        for (data, decoder) in files {
            let full = try decoder.decode(data)
            for (width, height) in [(64, 64), (37, 23), (300, 40), (1, 1), (203, 117)] {
                let thumbnail = try decoder.decode(data, options: ImageDecodingOptions(thumbnail: Thumbnail(width: width, height: height, mode: mode)))
                #expect(thumbnail == full.resized(toFit: width, height: height, mode: mode), "\(decoder.format) \(width)x\(height)")
            }
        }
    }
}
