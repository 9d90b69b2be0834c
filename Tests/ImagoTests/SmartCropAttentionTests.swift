import Imago
import Testing

/// The attention smart crop keeps what draws the eye: skin tones, strong
/// colour and edges, and the centre when nothing stands out.
@Suite struct SmartCropAttentionTests {
    /// A `width` x `height` image of flat gray with a disc of `color` of
    /// radius `radius` centred at `centre`.
    static func disc(width: Int, height: Int, centre: (x: Int, y: Int), radius: Int, color: [UInt8]) -> Image {
        var pixels = [UInt8]()
        pixels.reserveCapacity(width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let dx = x - centre.x, dy = y - centre.y
                pixels += dx * dx + dy * dy <= radius * radius ? color : [128, 128, 128]
            }
        }
        return Image(width: width, height: height, pixelFormat: .rgb8, pixels: pixels)
    }

    static let skin: [UInt8] = [224, 172, 140]
    static let saturatedBlue: [UInt8] = [20, 40, 240]

    @Test(arguments: [(skin, 480), (skin, 110), (saturatedBlue, 520), (saturatedBlue, 60)])
    func theCropKeepsTheSubject(color: [UInt8], centreX: Int) {
        let image = Self.disc(width: 800, height: 300, centre: (centreX, 150), radius: 50, color: color)
        let square = image.cropped(to: .aspectRatio(width: 1, height: 1), anchor: .smart(.attention))
        #expect(square.width == 300 && square.height == 300)
        // The disc's centre is inside the part kept, and the part kept holds the whole disc.
        let kept = square.pixels.count / 3
        let subject = stride(from: 0, to: square.pixels.count, by: 3).filter { square.pixels[$0] != 128 }.count
        let whole = image.pixels.count / 3 - stride(from: 0, to: image.pixels.count, by: 3).filter { image.pixels[$0] == 128 }.count
        #expect(subject == whole, "the whole disc is kept (\(subject) of \(whole) pixels, \(kept) kept)")
    }

    @Test func aFlatImageIsCutAtTheCentre() {
        let flat = Image(width: 400, height: 200, pixelFormat: .rgb8, pixels: [UInt8](repeating: 90, count: 400 * 200 * 3))
        let origin = flat.smartCropOrigin(width: 200, height: 200, strategy: .attention)
        #expect(origin.x == 100 && origin.y == 0)
    }

    @Test func theSameSizeOrANeedleShapedImageIsHandled() {
        let image = Self.disc(width: 120, height: 80, centre: (30, 40), radius: 10, color: Self.skin)
        #expect(image.cropped(to: .pixels(width: 120, height: 80), anchor: .smart(.attention)) == image)
        let needle = Image(width: 5000, height: 2, pixelFormat: .gray8, pixels: (0..<10_000).map { UInt8($0 % 251) })
        let cut = needle.cropped(to: .pixels(width: 100, height: 2), anchor: .smart(.attention))
        #expect(cut.width == 100 && cut.height == 2)
    }

    /// The subject is found in the first frame; every frame is cut there.
    @Test func anAnimationIsCutWhereItsFirstFrameSays() {
        let first = Self.disc(width: 600, height: 200, centre: (500, 100), radius: 40, color: Self.skin)
        let second = Self.disc(width: 600, height: 200, centre: (100, 100), radius: 40, color: Self.skin)
        let animation = Image(width: 600, height: 200, pixelFormat: .rgb8,
                              frames: [ImageFrame(pixels: first.pixels, duration: 0.1), ImageFrame(pixels: second.pixels, duration: 0.1)])
        let origin = animation.smartCropOrigin(width: 200, height: 200, strategy: .attention)
        #expect(origin.x >= 340 && origin.x <= 460, "the first frame's disc (460 to 540) is kept: x = \(origin.x)")
        let cut = animation.cropped(to: .pixels(width: 200, height: 200), anchor: .smart(.attention))
        #expect(cut.frames.count == 2)
        #expect(cut == animation.cropped(x: origin.x, y: origin.y, width: 200, height: 200))
    }
}
