import Imago
import Testing

/// The one answer to "which format is written when nobody asked".
@Suite struct OutputFormatPolicyTests {
    @Test(arguments: [
        (ImageFormat?.some(.jpeg), false, ImageFormat.jpeg),
        (.png, false, .png), (.png, true, .png),
        (.webp, false, .webp), (.webp, true, .webp),
        (.avif, false, .avif), (.avif, true, .avif),
        (.gif, false, .png), (.gif, true, .png),
        (.heic, false, .jpeg), (.heic, true, .png),
        (.jxl, false, .jpeg), (.jxl, true, .png),
        (nil, false, .jpeg), (nil, true, .png),
        (.jpeg, true, .png),   // alpha added after decoding (rounded corners)
    ] as [(ImageFormat?, Bool, ImageFormat)])
    func eachSourceHasOneOutputFormat(source: ImageFormat?, hasAlpha: Bool, expected: ImageFormat) {
        #expect(ImageFormat.defaultOutputFormat(forSource: source, hasAlpha: hasAlpha) == expected)
    }

    @Test func theChoiceIsAlwaysAFormatImagoWrites() {
        for source in ImageFormat.allCases.map(Optional.some) + [nil] {
            for hasAlpha in [false, true] {
                let chosen = ImageFormat.defaultOutputFormat(forSource: source, hasAlpha: hasAlpha)
                #expect(chosen.isWritable)
                #expect(!hasAlpha || chosen.storesAlpha)
            }
        }
        #expect(ImageFormat.writableFormats == [.jpeg, .png, .gif, .webp, .avif, .jxl])
        #expect(ImageFormat.allCases.filter(\.isWritable) == [.jpeg, .png, .gif, .webp, .avif, .jxl])
    }
}
