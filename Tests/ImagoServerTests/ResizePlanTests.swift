#if Server && os(Linux)
import Imago
import ImagoServer
import Testing

/// The geometry rules of imgproxy's resizing types, on sources that make
/// each rule visible.
@Suite struct ResizePlanTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let source: (Int, Int)
        let type: ProcessingOptions.ResizingType
        let box: (Int, Int)
        var enlarge = false
        let scaled: (Int, Int)
        let kept: (Int, Int)
        var testDescription: String { "\(type.rawValue) \(source) into \(box)\(enlarge ? " enlarging" : "")" }
    }

    static let cases: [Case] = [
        // fit: inside the box, aspect kept.
        Case(source: (4000, 3000), type: .fit, box: (256, 256), scaled: (256, 192), kept: (256, 192)),
        Case(source: (3000, 4000), type: .fit, box: (256, 256), scaled: (192, 256), kept: (192, 256)),
        Case(source: (400, 300), type: .fit, box: (800, 800), scaled: (400, 300), kept: (400, 300)),
        Case(source: (400, 300), type: .fit, box: (800, 800), enlarge: true, scaled: (800, 600), kept: (800, 600)),
        // A zero side follows the aspect ratio; two zeros keep the size.
        Case(source: (4000, 3000), type: .fit, box: (200, 0), scaled: (200, 150), kept: (200, 150)),
        Case(source: (4000, 3000), type: .fit, box: (0, 150), scaled: (200, 150), kept: (200, 150)),
        Case(source: (640, 480), type: .fit, box: (0, 0), scaled: (640, 480), kept: (640, 480)),
        Case(source: (4000, 3000), type: .fill, box: (300, 0), scaled: (300, 225), kept: (300, 225)),
        // fill: covers the box, then crops to it.
        Case(source: (4000, 3000), type: .fill, box: (200, 200), scaled: (267, 200), kept: (200, 200)),
        Case(source: (3000, 4000), type: .fill, box: (300, 100), scaled: (300, 400), kept: (300, 100)),
        Case(source: (100, 50), type: .fill, box: (200, 200), scaled: (100, 50), kept: (100, 50)),
        Case(source: (100, 50), type: .fill, box: (200, 200), enlarge: true, scaled: (400, 200), kept: (200, 200)),
        // fill-down: never enlarges; keeps the box's aspect ratio instead.
        Case(source: (100, 50), type: .fillDown, box: (200, 200), scaled: (100, 50), kept: (50, 50)),
        Case(source: (300, 200), type: .fillDown, box: (400, 100), scaled: (300, 200), kept: (300, 75)),
        Case(source: (4000, 3000), type: .fillDown, box: (200, 200), scaled: (267, 200), kept: (200, 200)),
        // force: exactly the box, aspect ignored; without enlarge, a box
        // larger on one side scales both sides back by the same factor
        // (imgproxy keeps the stretch, not the box).
        Case(source: (4000, 3000), type: .force, box: (100, 300), scaled: (100, 300), kept: (100, 300)),
        Case(source: (50, 50), type: .force, box: (100, 30), scaled: (50, 15), kept: (50, 15)),
        Case(source: (50, 50), type: .force, box: (100, 30), enlarge: true, scaled: (100, 30), kept: (100, 30)),
        // auto: fill for the same orientation, else fit.
        Case(source: (4000, 3000), type: .auto, box: (400, 200), scaled: (400, 300), kept: (400, 200)),
        Case(source: (3000, 4000), type: .auto, box: (400, 200), scaled: (150, 200), kept: (150, 200)),
        Case(source: (4000, 3000), type: .auto, box: (0, 0), scaled: (4000, 3000), kept: (4000, 3000)),
    ]

    @Test(arguments: cases)
    func theGeometryFollowsImgproxy(_ example: Case) {
        var options = ProcessingOptions()
        options.resizingType = example.type
        options.width = example.box.0
        options.height = example.box.1
        options.enlarge = example.enlarge
        let plan = ResizePlan(sourceWidth: example.source.0, sourceHeight: example.source.1, options: options)
        #expect(plan.scaledWidth == example.scaled.0)
        #expect(plan.scaledHeight == example.scaled.1)
        #expect(plan.width == example.kept.0)
        #expect(plan.height == example.kept.1)
        #expect(plan.crops == (example.scaled != example.kept))
    }

    @Test func noSideExceedsTheMaximum() {
        var options = ProcessingOptions()
        options.width = 8192
        options.enlarge = true
        let plan = ResizePlan(sourceWidth: 100, sourceHeight: 1000, options: options)
        #expect(plan.scaledHeight == 8192)
        #expect(plan.scaledWidth == 819)
        let tiny = ResizePlan(sourceWidth: 10_000, sourceHeight: 1, options: options)
        #expect((tiny.scaledWidth, tiny.scaledHeight) == (8192, 1))
    }

    /// imgproxy's placement on a 300x100 source cut to 100x100 (200
    /// spare pixels across): offsets point inward from the named edge
    /// (fractions of the outer size below 1), a focus point is centred and
    /// kept inside.
    @Test(arguments: [
        ("g:ce", 100, 0), ("g:we", 0, 0), ("g:ea", 200, 0), ("g:no", 100, 0), ("g:so", 100, 0), ("g:sm", 0, 0),
        ("g:we:10", 10, 0), ("g:ea:10", 190, 0), ("g:ce:10", 110, 0), ("g:ce:-10", 90, 0), ("g:ce:0.1", 130, 0),
        ("g:nowe:500", 200, 0), ("g:fp:0.3:0.5", 40, 0), ("g:fp:0.9:0.5", 200, 0), ("g:fp:0:0", 0, 0),
    ])
    func gravityPlacesTheCrop(_ gravity: String, _ x: Int, _ y: Int) throws {
        let options = try ImageServerPath(parsing: "/insecure/rs:fill:100:100/\(gravity)/plain/http%3A%2F%2Fx%2Fa.png").options
        let plan = ResizePlan(sourceWidth: 300, sourceHeight: 100, options: options)
        #expect((plan.scaledWidth, plan.scaledHeight, plan.width, plan.height) == (300, 100, 100, 100))
        if options.gravity != .smart {
            #expect(plan.cropOrigin.x == x)
            #expect(plan.cropOrigin.y == y)
        }
    }

    /// A centred part splits the spare pixels as the library does, the odd
    /// one after (imgproxy may put it before: one pixel, no size changes),
    /// so the server cuts the pixels `Image.resized(toFit:)` cuts.
    @Test func anOddSparePixelGoesAfterWhenCentred() {
        var options = ProcessingOptions()
        options.resizingType = .fill
        (options.width, options.height) = (100, 100)
        for width in 300...303 {
            let plan = ResizePlan(sourceWidth: width, sourceHeight: 100, options: options)
            let library = ResizeGeometry(sourceWidth: width, sourceHeight: 100, boxWidth: 100, boxHeight: 100, mode: .crop)
            #expect(plan.cropOrigin.x == (width - 100) / 2)
            #expect(plan.cropOrigin.x == library.cropX)
        }
    }
}
#endif
