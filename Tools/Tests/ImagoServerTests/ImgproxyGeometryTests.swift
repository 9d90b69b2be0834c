import Foundation
import Imago
import ImagoServer
import Testing

/// imgproxy's own result sizes, ported from its processing tests: every
/// resizing type with and without `enlarge`, `extend` and
/// `extend_aspect_ratio` on a 200x100 source, `max_result_dimension`
/// with rotation and padding, and the gravity, crop, extend, padding, dpr,
/// zoom and min-width cases. Each path is parsed as the server parses it,
/// planned, then applied to real pixels, which must come out at the size
/// the plan (and imgproxy) says.
@Suite struct ImgproxyGeometryTests {
    static let source = Image(width: 200, height: 100, pixelFormat: .rgb8, pixels: (0..<200 * 100 * 3).map { UInt8($0 % 251) })

    static func options(_ text: String) throws -> ProcessingOptions {
        try ImageServerPath(parsing: "/insecure/\(text)/plain/http%3A%2F%2Fx%2Fa.png").options
    }

    static func check(_ text: String, _ width: Int, _ height: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let options = try options(text)
        let plan = ResizePlan(sourceWidth: 200, sourceHeight: 100, options: options)
        #expect("\(plan.resultWidth)x\(plan.resultHeight)" == "\(width)x\(height)", "\(text)", sourceLocation: sourceLocation)
        let image = options.apply(to: source)
        #expect("\(image.width)x\(image.height)" == "\(width)x\(height)", "\(text), pixels", sourceLocation: sourceLocation)
    }

    /// imgproxy's `TestResizeTo*` cases: (options, result width, height).
    static let resizing: [(String, Int, Int)] = [
        ("rs:fit:50:50", 50, 25),
        ("rs:fit:50:20", 40, 20),
        ("rs:fit:20:50", 20, 10),
        ("rs:fit:300:300", 200, 100),
        ("rs:fit:300:50", 100, 50),
        ("rs:fit:100:300", 100, 50),
        ("rs:fit:0:50", 100, 50),
        ("rs:fit:50:0", 50, 25),
        ("rs:fit:0:200", 200, 100),
        ("rs:fit:300:0", 200, 100),
        ("rs:fit:50:50/el:1", 50, 25),
        ("rs:fit:50:20/el:1", 40, 20),
        ("rs:fit:20:50/el:1", 20, 10),
        ("rs:fit:300:300/el:1", 300, 150),
        ("rs:fit:300:125/el:1", 250, 125),
        ("rs:fit:250:300/el:1", 250, 125),
        ("rs:fit:0:50/el:1", 100, 50),
        ("rs:fit:50:0/el:1", 50, 25),
        ("rs:fit:0:200/el:1", 400, 200),
        ("rs:fit:300:0/el:1", 300, 150),
        ("rs:fit:50:50/ex:1", 50, 50),
        ("rs:fit:50:20/ex:1", 50, 20),
        ("rs:fit:20:50/ex:1", 20, 50),
        ("rs:fit:300:300/ex:1", 300, 300),
        ("rs:fit:300:125/ex:1", 300, 125),
        ("rs:fit:250:300/ex:1", 250, 300),
        ("rs:fit:0:50/ex:1", 100, 50),
        ("rs:fit:50:0/ex:1", 50, 25),
        ("rs:fit:0:200/ex:1", 200, 200),
        ("rs:fit:300:0/ex:1", 300, 100),
        ("rs:fit:50:50/exar:1", 50, 50),
        ("rs:fit:50:20/exar:1", 50, 20),
        ("rs:fit:20:50/exar:1", 20, 50),
        ("rs:fit:300:300/exar:1", 200, 200),
        ("rs:fit:300:125/exar:1", 240, 100),
        ("rs:fit:250:500/exar:1", 200, 400),
        ("rs:fit:0:50/exar:1", 100, 50),
        ("rs:fit:50:0/exar:1", 50, 25),
        ("rs:fit:0:200/exar:1", 200, 100),
        ("rs:fit:300:0/exar:1", 200, 100),
        ("rs:fill:50:50", 50, 50),
        ("rs:fill:50:20", 50, 20),
        ("rs:fill:20:50", 20, 50),
        ("rs:fill:300:300", 200, 100),
        ("rs:fill:300:50", 200, 50),
        ("rs:fill:100:300", 100, 100),
        ("rs:fill:0:50", 100, 50),
        ("rs:fill:50:0", 50, 25),
        ("rs:fill:0:200", 200, 100),
        ("rs:fill:300:0", 200, 100),
        ("rs:fill:50:50/el:1", 50, 50),
        ("rs:fill:50:20/el:1", 50, 20),
        ("rs:fill:20:50/el:1", 20, 50),
        ("rs:fill:300:300/el:1", 300, 300),
        ("rs:fill:300:125/el:1", 300, 125),
        ("rs:fill:250:300/el:1", 250, 300),
        ("rs:fill:0:50/el:1", 100, 50),
        ("rs:fill:50:0/el:1", 50, 25),
        ("rs:fill:0:200/el:1", 400, 200),
        ("rs:fill:300:0/el:1", 300, 150),
        ("rs:fill:50:50/ex:1", 50, 50),
        ("rs:fill:50:20/ex:1", 50, 20),
        ("rs:fill:20:50/ex:1", 20, 50),
        ("rs:fill:300:300/ex:1", 300, 300),
        ("rs:fill:300:125/ex:1", 300, 125),
        ("rs:fill:250:300/ex:1", 250, 300),
        ("rs:fill:300:50/ex:1", 300, 50),
        ("rs:fill:100:300/ex:1", 100, 300),
        ("rs:fill:0:50/ex:1", 100, 50),
        ("rs:fill:50:0/ex:1", 50, 25),
        ("rs:fill:0:200/ex:1", 200, 200),
        ("rs:fill:300:0/ex:1", 300, 100),
        ("rs:fill:50:50/exar:1", 50, 50),
        ("rs:fill:50:20/exar:1", 50, 20),
        ("rs:fill:20:50/exar:1", 20, 50),
        ("rs:fill:300:300/exar:1", 200, 200),
        ("rs:fill:300:125/exar:1", 240, 100),
        ("rs:fill:250:500/exar:1", 200, 400),
        ("rs:fill:300:50/exar:1", 300, 50),
        ("rs:fill:100:300/exar:1", 100, 300),
        ("rs:fill:0:50/exar:1", 100, 50),
        ("rs:fill:50:0/exar:1", 50, 25),
        ("rs:fill:0:200/exar:1", 200, 100),
        ("rs:fill:300:0/exar:1", 200, 100),
        ("rs:fill-down:50:50", 50, 50),
        ("rs:fill-down:50:20", 50, 20),
        ("rs:fill-down:20:50", 20, 50),
        ("rs:fill-down:300:300", 100, 100),
        ("rs:fill-down:300:125", 200, 83),
        ("rs:fill-down:250:300", 83, 100),
        ("rs:fill-down:0:50", 100, 50),
        ("rs:fill-down:50:0", 50, 25),
        ("rs:fill-down:0:200", 200, 100),
        ("rs:fill-down:300:0", 200, 100),
        ("rs:fill-down:50:50/el:1", 50, 50),
        ("rs:fill-down:50:20/el:1", 50, 20),
        ("rs:fill-down:20:50/el:1", 20, 50),
        ("rs:fill-down:300:300/el:1", 300, 300),
        ("rs:fill-down:300:125/el:1", 300, 125),
        ("rs:fill-down:250:300/el:1", 250, 300),
        ("rs:fill-down:0:50/el:1", 100, 50),
        ("rs:fill-down:50:0/el:1", 50, 25),
        ("rs:fill-down:0:200/el:1", 400, 200),
        ("rs:fill-down:300:0/el:1", 300, 150),
        ("rs:fill-down:50:50/ex:1", 50, 50),
        ("rs:fill-down:50:20/ex:1", 50, 20),
        ("rs:fill-down:20:50/ex:1", 20, 50),
        ("rs:fill-down:300:300/ex:1", 300, 300),
        ("rs:fill-down:300:125/ex:1", 300, 125),
        ("rs:fill-down:250:300/ex:1", 250, 300),
        ("rs:fill-down:300:50/ex:1", 300, 50),
        ("rs:fill-down:100:300/ex:1", 100, 300),
        ("rs:fill-down:0:50/ex:1", 100, 50),
        ("rs:fill-down:50:0/ex:1", 50, 25),
        ("rs:fill-down:0:200/ex:1", 200, 200),
        ("rs:fill-down:300:0/ex:1", 300, 100),
        ("rs:fill-down:50:50/exar:1", 50, 50),
        ("rs:fill-down:50:20/exar:1", 50, 20),
        ("rs:fill-down:20:50/exar:1", 20, 50),
        ("rs:fill-down:300:300/exar:1", 100, 100),
        ("rs:fill-down:300:125/exar:1", 200, 83),
        ("rs:fill-down:250:300/exar:1", 83, 100),
        ("rs:fill-down:0:50/exar:1", 100, 50),
        ("rs:fill-down:50:0/exar:1", 50, 25),
        ("rs:fill-down:0:200/exar:1", 200, 100),
        ("rs:fill-down:300:0/exar:1", 200, 100),
    ]

    /// imgproxy's `TestResultSizeLimit` cases (security options allowed).
    static let resultLimits: [(String, Int, Int)] = [
        ("mrd:1000/rs:fit:100:100", 100, 50),
        ("mrd:50/rs:fit:100:100", 50, 25),
        ("mrd:50/rs:fit:0:0", 50, 25),
        ("mrd:100/rs:fit:0:100", 100, 50),
        ("mrd:50/rs:fit:150:0", 50, 25),
        ("mrd:100/rs:fit:1000:1000", 100, 50),
        ("mrd:100/rs:fit:1000:1000/el:1", 100, 50),
        ("mrd:100/rs:fit:1000:2000/ex:1", 50, 100),
        ("mrd:100/rs:fit:1000:2000/exar:1", 50, 100),
        ("mrd:100/rs:fit:100:150/rot:90", 50, 100),
        ("mrd:100/rs:fit:0:0/rot:90", 50, 100),
        ("mrd:200/rs:fit:100:100/pd:100:200:300:400", 200, 129),
        ("mrd:1000/rs:fill:100:100", 100, 100),
        ("mrd:50/rs:fill:100:100", 50, 50),
        ("mrd:50/rs:fill:1000:50", 50, 13),
        ("mrd:50/rs:fill:100:1000", 50, 50),
        ("mrd:50/rs:fill:0:0", 50, 25),
        ("mrd:100/rs:fill:0:100", 100, 50),
        ("mrd:50/rs:fill:150:0", 50, 25),
        ("mrd:100/rs:fill:1000:1000", 100, 50),
        ("mrd:100/rs:fill:1000:1000/el:1", 100, 100),
        ("mrd:100/rs:fill:1000:2000/ex:1", 50, 100),
        ("mrd:100/rs:fill:1000:2000/exar:1", 50, 100),
        ("mrd:100/rs:fill:100:150/rot:90", 67, 100),
        ("mrd:100/rs:fill:0:0/rot:90", 50, 100),
        ("mrd:200/rs:fill:100:100/pd:100:200:300:400", 200, 144),
        ("mrd:1000/rs:fill-down:100:100", 100, 100),
        ("mrd:50/rs:fill-down:100:100", 50, 50),
        ("mrd:50/rs:fill-down:1000:50", 50, 3),
        ("mrd:50/rs:fill-down:100:1000", 5, 50),
        ("mrd:50/rs:fill-down:0:0", 50, 25),
        ("mrd:100/rs:fill-down:0:100", 100, 50),
        ("mrd:50/rs:fill-down:150:0", 50, 25),
        ("mrd:100/rs:fill-down:1000:1000", 100, 100),
        ("mrd:100/rs:fill-down:1000:1000/el:1", 100, 100),
        ("mrd:100/rs:fill-down:1000:2000/ex:1", 50, 100),
        ("mrd:100/rs:fill-down:1000:2000/exar:1", 50, 100),
        ("mrd:100/rs:fill-down:1000:1500/rot:90", 67, 100),
        ("mrd:100/rs:fill-down:0:0/rot:90", 50, 100),
        ("mrd:200/rs:fill-down:100:100/pd:100:200:300:400", 200, 144),
        ("mrd:200/rs:fill-down:1000:1000/pd:100:200:300:400", 200, 144),
    ]

    /// imgproxy's crop, extend, padding and gravity tests, with dpr, zoom
    /// and min-width.
    static let placements: [(String, Int, Int)] = [
        ("rs:fill:100:26/g:ce/dpr:2", 200, 52),
        ("rs:fill:100:26/g:no::5", 100, 26),
        ("rs:fill:100:26/g:no::5/dpr:0.5", 50, 13),
        ("rs:fill:100:26/g:no::5/dpr:2", 200, 52),
        ("rs:fill:26:100/g:no:5", 26, 100),
        ("rs:fill:26:100/g:no:5/dpr:0.5", 13, 50),
        ("rs:fill:26:100/g:no:5/dpr:2", 26, 100),
        ("rs:fill:100:26/g:no::0.1/dpr:2", 200, 52),
        ("c:50:50:ce:10:10", 50, 50),
        ("c:50:50:ce:10:10/dpr:0.5", 25, 25),
        ("w:500/h:500/ex:1:no::5", 500, 500),
        ("w:500/h:500/ex:1:no::5/dpr:0.5", 250, 250),
        ("w:500/h:500/ex:1:no::5/dpr:2", 500, 500),
        ("w:500/h:500/ex:1:ea:5/dpr:0.5", 250, 250),
        ("w:300/h:600/exar:1", 200, 400),
        ("w:300/h:600/exar:1:no::0.1/dpr:0.5", 150, 300),
        ("w:300/h:600/exar:1:so/dpr:2", 200, 400),
        ("dpr:0.5/padding:20:30:40:10/background:f00/enlarge:1", 120, 80),
        ("dpr:1/padding:20:30:40:10/background:f00/enlarge:1", 240, 160),
        ("dpr:2/padding:20:30:40:10/background:f00/enlarge:1", 480, 320),
        ("resize:fill:300:300/enlarge:1/padding:100", 500, 500),
        ("mw:400", 400, 200),
        ("mw:400/dpr:2", 400, 200),
        ("z:2", 200, 100),
        ("z:2/el:1", 400, 200),
    ]

    @Test(arguments: resizing)
    func resizingTypesGiveImgproxysSizes(_ options: String, _ width: Int, _ height: Int) throws {
        try Self.check(options, width, height)
    }

    @Test(arguments: resultLimits)
    func theResultLimitScalesDownAsImgproxys(_ options: String, _ width: Int, _ height: Int) throws {
        try Self.check(options, width, height)
    }

    @Test(arguments: placements)
    func cropExtendPaddingAndDPRGiveImgproxysSizes(_ options: String, _ width: Int, _ height: Int) throws {
        try Self.check(options, width, height)
    }

    @Test(arguments: ["ce", "no", "so", "ea", "we", "noea", "nowe", "soea", "sowe"])
    func everyGravityKeepsTheSize(_ gravity: String) throws {
        try Self.check("rs:fill:100:26/g:\(gravity)", 100, 26)
        try Self.check("rs:fill:26:100/g:\(gravity)", 26, 100)
        try Self.check("c:50:50:\(gravity)", 50, 50)
        try Self.check("w:500/h:500/ex:1:\(gravity)", 500, 500)
        try Self.check("w:300/h:600/exar:1:\(gravity)", 200, 400)
    }
}
