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
        // force: exactly the box, aspect ignored (never enlarged without enlarge).
        Case(source: (4000, 3000), type: .force, box: (100, 300), scaled: (100, 300), kept: (100, 300)),
        Case(source: (50, 50), type: .force, box: (100, 30), scaled: (50, 30), kept: (50, 30)),
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

    @Test(arguments: [
        (ProcessingOptions.Gravity.center, 33, 50), (.north, 33, 0), (.south, 33, 100), (.west, 0, 50), (.east, 67, 50),
        (.northWest, 0, 0), (.northEast, 67, 0), (.southWest, 0, 100), (.southEast, 67, 100), (.smart, 33, 50),
    ])
    func gravityPlacesTheCrop(_ gravity: ProcessingOptions.Gravity, _ x: Int, _ y: Int) {
        var options = ProcessingOptions()
        options.resizingType = .force
        options.width = 267
        options.height = 300
        let scaled = ResizePlan(sourceWidth: 267, sourceHeight: 300, options: options)
        #expect((scaled.scaledWidth, scaled.scaledHeight) == (267, 300))
        var plan = scaled
        plan.width = 200
        plan.height = 200
        plan.gravity = gravity
        #expect(plan.cropOrigin.x == x)
        #expect(plan.cropOrigin.y == y)
    }
}
