#if Server && os(Linux)
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

    /// The cases, kept in Fixtures/imgproxy-geometry-cases.json so that
    /// `imago serve` is checked against the same ones (ServeTests).
    static func table(_ name: String) -> [(String, Int, Int)] {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/imgproxy-geometry-cases.json")
        let tables = try! JSONSerialization.jsonObject(with: Data(contentsOf: file)) as! [String: Any]
        return (tables[name] as! [[Any]]).map { ($0[0] as! String, $0[1] as! Int, $0[2] as! Int) }
    }

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
    static let resizing = table("resizing")

    /// imgproxy's `TestResultSizeLimit` cases (security options allowed).
    static let resultLimits = table("resultLimits")

    /// imgproxy's crop, extend, padding and gravity tests, with dpr, zoom
    /// and min-width.
    static let placements = table("placements")

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
#endif
