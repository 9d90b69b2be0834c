import Imago
import ImagoTesting
import Testing

/// The one box arithmetic: scaled size and part kept for every mode, with
/// and without upscaling, free sides, extremes and rounding.
@Suite struct ResizeGeometryTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let source: (Int, Int)
        let box: (Int, Int)
        let mode: ResizeMode
        var gravity: Gravity = .center
        var upscaling = false
        var maximum: Int?
        let scaled: (Int, Int)
        /// x, y, width, height of the part kept.
        let kept: (Int, Int, Int, Int)
        var testDescription: String {
            "\(source) \(mode.rawValue) into \(box) \(gravity.rawValue)\(upscaling ? " upscaling" : "")\(maximum.map { " max \($0)" } ?? "")"
        }
    }

    static let cases: [Case] = [
        // fit: inside the box, aspect ratio kept.
        Case(source: (4000, 3000), box: (256, 256), mode: .fit, scaled: (256, 192), kept: (0, 0, 256, 192)),
        Case(source: (3000, 4000), box: (256, 256), mode: .fit, scaled: (192, 256), kept: (0, 0, 192, 256)),
        Case(source: (400, 200), box: (100, 100), mode: .fit, scaled: (100, 50), kept: (0, 0, 100, 50)),
        // fill: covers the box, nothing cut.
        Case(source: (400, 200), box: (100, 100), mode: .fill, scaled: (200, 100), kept: (0, 0, 200, 100)),
        // crop: covers, then the box is kept at the gravity.
        Case(source: (400, 200), box: (100, 100), mode: .crop, scaled: (200, 100), kept: (50, 0, 100, 100)),
        Case(source: (4000, 3000), box: (200, 200), mode: .crop, scaled: (267, 200), kept: (33, 0, 200, 200)),
        Case(source: (4000, 3000), box: (200, 200), mode: .crop, gravity: .west, scaled: (267, 200), kept: (0, 0, 200, 200)),
        Case(source: (4000, 3000), box: (200, 200), mode: .crop, gravity: .east, scaled: (267, 200), kept: (67, 0, 200, 200)),
        Case(source: (4000, 3000), box: (200, 200), mode: .crop, gravity: .north, scaled: (267, 200), kept: (33, 0, 200, 200)),
        Case(source: (3000, 4000), box: (200, 200), mode: .crop, gravity: .north, scaled: (200, 267), kept: (0, 0, 200, 200)),
        Case(source: (3000, 4000), box: (200, 200), mode: .crop, gravity: .south, scaled: (200, 267), kept: (0, 67, 200, 200)),
        Case(source: (3000, 4000), box: (200, 200), mode: .crop, gravity: .northEast, scaled: (200, 267), kept: (0, 0, 200, 200)),
        Case(source: (3000, 4000), box: (200, 200), mode: .crop, gravity: .southWest, scaled: (200, 267), kept: (0, 67, 200, 200)),
        Case(source: (300, 300), box: (100, 50), mode: .crop, gravity: .northWest, scaled: (100, 100), kept: (0, 0, 100, 50)),
        Case(source: (300, 300), box: (100, 50), mode: .crop, gravity: .southEast, scaled: (100, 100), kept: (0, 50, 100, 50)),
        Case(source: (300, 300), box: (50, 100), mode: .crop, gravity: .southEast, scaled: (100, 100), kept: (50, 0, 50, 100)),
        // Never enlarged by default; crop then cuts only what exceeds the box.
        Case(source: (40, 20), box: (100, 100), mode: .fit, scaled: (40, 20), kept: (0, 0, 40, 20)),
        Case(source: (40, 20), box: (100, 100), mode: .crop, scaled: (40, 20), kept: (0, 0, 40, 20)),
        Case(source: (400, 50), box: (100, 100), mode: .crop, scaled: (400, 50), kept: (150, 0, 100, 50)),
        // cropToAspectRatio (imgproxy's fill-down): the box's shape when not enlarged.
        Case(source: (100, 50), box: (200, 200), mode: .cropToAspectRatio, scaled: (100, 50), kept: (25, 0, 50, 50)),
        Case(source: (300, 200), box: (400, 100), mode: .cropToAspectRatio, scaled: (300, 200), kept: (0, 62, 300, 75)),
        Case(source: (4000, 3000), box: (200, 200), mode: .cropToAspectRatio, scaled: (267, 200), kept: (33, 0, 200, 200)),
        // Upscaling allowed.
        Case(source: (40, 20), box: (100, 100), mode: .fit, upscaling: true, scaled: (100, 50), kept: (0, 0, 100, 50)),
        Case(source: (100, 50), box: (200, 200), mode: .crop, upscaling: true, scaled: (400, 200), kept: (100, 0, 200, 200)),
        Case(source: (100, 50), box: (200, 200), mode: .cropToAspectRatio, upscaling: true, scaled: (400, 200), kept: (100, 0, 200, 200)),
        // force: each side on its own; a side smaller than the box keeps its size.
        Case(source: (4000, 3000), box: (100, 300), mode: .force, scaled: (100, 300), kept: (0, 0, 100, 300)),
        Case(source: (50, 50), box: (100, 30), mode: .force, scaled: (50, 30), kept: (0, 0, 50, 30)),
        Case(source: (50, 50), box: (100, 30), mode: .force, upscaling: true, scaled: (100, 30), kept: (0, 0, 100, 30)),
        // A zero side is free; two keep the source's size.
        Case(source: (4000, 3000), box: (200, 0), mode: .fit, scaled: (200, 150), kept: (0, 0, 200, 150)),
        Case(source: (4000, 3000), box: (0, 150), mode: .fit, scaled: (200, 150), kept: (0, 0, 200, 150)),
        Case(source: (4000, 3000), box: (300, 0), mode: .crop, scaled: (300, 225), kept: (0, 0, 300, 225)),
        Case(source: (4000, 3000), box: (0, 150), mode: .force, scaled: (200, 150), kept: (0, 0, 200, 150)),
        Case(source: (640, 480), box: (0, 0), mode: .fit, scaled: (640, 480), kept: (0, 0, 640, 480)),
        Case(source: (640, 480), box: (0, 0), mode: .crop, upscaling: true, scaled: (640, 480), kept: (0, 0, 640, 480)),
        // Extreme aspect ratios: no side rounds to 0.
        Case(source: (10_000, 1), box: (100, 100), mode: .fit, scaled: (100, 1), kept: (0, 0, 100, 1)),
        Case(source: (1, 10_000), box: (100, 100), mode: .fit, scaled: (1, 100), kept: (0, 0, 1, 100)),
        Case(source: (10_000, 1), box: (100, 100), mode: .crop, scaled: (10_000, 1), kept: (4_950, 0, 100, 1)),
        Case(source: (10_000, 10), box: (100, 100), mode: .fit, scaled: (100, 1), kept: (0, 0, 100, 1)),
        Case(source: (10_000, 149), box: (100, 100), mode: .fit, scaled: (100, 1), kept: (0, 0, 100, 1)),
        Case(source: (10_000, 150), box: (100, 100), mode: .fit, scaled: (100, 2), kept: (0, 0, 100, 2)),
        // 1x1 sources and boxes.
        Case(source: (1, 1), box: (100, 100), mode: .crop, scaled: (1, 1), kept: (0, 0, 1, 1)),
        Case(source: (1, 1), box: (100, 50), mode: .crop, upscaling: true, scaled: (100, 100), kept: (0, 25, 100, 50)),
        Case(source: (4000, 3000), box: (1, 1), mode: .fit, scaled: (1, 1), kept: (0, 0, 1, 1)),
        Case(source: (4000, 3000), box: (1, 1), mode: .crop, scaled: (1, 1), kept: (0, 0, 1, 1)),
        Case(source: (3, 2), box: (1, 1), mode: .crop, scaled: (2, 1), kept: (0, 0, 1, 1)),
        // Rounding: halves away from zero, once.
        Case(source: (3, 1), box: (2, 2), mode: .fit, scaled: (2, 1), kept: (0, 0, 2, 1)),
        Case(source: (5, 3), box: (2, 2), mode: .fit, scaled: (2, 1), kept: (0, 0, 2, 1)),
        Case(source: (4, 3), box: (2, 2), mode: .fit, scaled: (2, 2), kept: (0, 0, 2, 2)),
        // The maximum side lowers the scale.
        Case(source: (100, 1000), box: (8192, 0), mode: .fit, upscaling: true, maximum: 8192, scaled: (819, 8192), kept: (0, 0, 819, 8192)),
        Case(source: (10_000, 1), box: (8192, 0), mode: .fit, upscaling: true, maximum: 8192, scaled: (8192, 1), kept: (0, 0, 8192, 1)),
        Case(source: (4000, 3000), box: (0, 0), mode: .fit, maximum: 1000, scaled: (1000, 750), kept: (0, 0, 1000, 750)),
    ]

    @Test(arguments: cases)
    func theTableHolds(_ example: Case) {
        let geometry = ResizeGeometry(sourceWidth: example.source.0, sourceHeight: example.source.1, boxWidth: example.box.0,
                                      boxHeight: example.box.1, mode: example.mode, gravity: example.gravity,
                                      allowsUpscaling: example.upscaling, maximumSide: example.maximum)
        #expect((geometry.scaledWidth, geometry.scaledHeight) == example.scaled, "\(geometry)")
        #expect((geometry.cropX, geometry.cropY, geometry.width, geometry.height) == example.kept, "\(geometry)")
        #expect(geometry.crops == (example.scaled != (example.kept.2, example.kept.3)))
    }

    /// Whatever the sizes, the result is never empty, the part kept lies in
    /// the scaled image, and no side grows without upscaling.
    @Test(arguments: ResizeMode.allCases)
    func everyResultIsInsideTheScaledImage(_ mode: ResizeMode) {
        let sides = [1, 2, 3, 7, 64, 99, 100, 101, 1000, 4999]
        for width in sides {
            for height in sides {
                for (boxWidth, boxHeight) in [(1, 1), (0, 50), (50, 0), (100, 100), (3, 700), (640, 480)] {
                    for gravity in Gravity.allCases {
                        let geometry = ResizeGeometry(sourceWidth: width, sourceHeight: height, boxWidth: boxWidth, boxHeight: boxHeight,
                                                      mode: mode, gravity: gravity)
                        let label = "\(width)x\(height) \(boxWidth)x\(boxHeight) \(gravity): \(geometry)"
                        #expect(geometry.width >= 1 && geometry.height >= 1, "\(label)")
                        #expect(geometry.scaledWidth <= width && geometry.scaledHeight <= height, "\(label)")
                        #expect(geometry.cropX >= 0 && geometry.cropY >= 0, "\(label)")
                        #expect(geometry.cropX + geometry.width <= geometry.scaledWidth, "\(label)")
                        #expect(geometry.cropY + geometry.height <= geometry.scaledHeight, "\(label)")
                        if mode == .crop || mode == .cropToAspectRatio, boxWidth > 0, boxHeight > 0 {
                            #expect(geometry.width <= boxWidth && geometry.height <= boxHeight, "\(label)")
                        }
                    }
                }
            }
        }
    }

    @Test func gravityPlacesAPartInsideAnother() {
        let origins = Gravity.allCases.map { ($0, $0.origin(ofWidth: 20, height: 10, inWidth: 51, height: 31)) }
        let expected: [Gravity: (Int, Int)] = [
            .center: (15, 10), .north: (15, 0), .south: (15, 21), .east: (31, 10), .west: (0, 10),
            .northEast: (31, 0), .northWest: (0, 0), .southEast: (31, 21), .southWest: (0, 21),
        ]
        for (gravity, origin) in origins {
            #expect(origin == expected[gravity]!, "\(gravity)")
        }
        #expect(Gravity.east.origin(ofWidth: 60, height: 40, inWidth: 50, height: 30) == (0, 0), "no spare pixels")
    }

    /// The image is resampled once to the scaled size and then cut: the same
    /// pixels as the two steps by hand, for every mode.
    @Test(arguments: ResizeMode.allCases)
    func resizedToAGeometryResamplesThenCuts(_ mode: ResizeMode) {
        let image = TestImages.gradient(width: 97, height: 61)
        let geometry = ResizeGeometry(sourceWidth: 97, sourceHeight: 61, boxWidth: 30, boxHeight: 30, mode: mode, gravity: .southEast)
        let byHand = image.resized(width: geometry.scaledWidth, height: geometry.scaledHeight)
            .cropped(x: geometry.cropX, y: geometry.cropY, width: geometry.width, height: geometry.height)
        #expect(image.resized(to: geometry) == byHand)
        #expect(image.resized(toFit: 30, height: 30, mode: mode)
            == image.resized(to: ResizeGeometry(sourceWidth: 97, sourceHeight: 61, boxWidth: 30, boxHeight: 30, mode: mode)))
    }

    /// A thumbnail's scaled size is the geometry's, centred and never enlarged.
    @Test(arguments: ResizeMode.allCases)
    func thumbnailsAskTheGeometry(_ mode: ResizeMode) {
        let thumbnail = Thumbnail(width: 64, height: 48, mode: mode)
        for (width, height) in [(4000, 3000), (30, 900), (10, 10), (1, 5000)] {
            let geometry = ResizeGeometry(sourceWidth: width, sourceHeight: height, boxWidth: 64, boxHeight: 48, mode: mode)
            #expect(thumbnail.geometry(width: width, height: height) == geometry)
            #expect(thumbnail.scaledSize(width: width, height: height) == (geometry.scaledWidth, geometry.scaledHeight))
        }
    }
}
