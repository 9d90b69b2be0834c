// TODO(server-doubles): delete this file when main's ImageComparison
// (ImagoTesting) lands; the tests are written against its API already.
import Imago

struct ImageComparison {
    enum Tolerance { case exact, within(levels: Int), visuallyIdentical }
    struct ImageMismatch: Error, CustomStringConvertible { let description: String }

    let actual: Image
    let expected: Image
    init(_ actual: Image, _ expected: Image) {
        self.actual = actual.converted(to: .rgba8)
        self.expected = expected.converted(to: .rgba8)
    }

    var largestDifference: Int {
        guard actual.width == expected.width, actual.height == expected.height else { return 255 }
        return zip(actual.pixels, expected.pixels).map { abs(Int($0) - Int($1)) }.max() ?? 0
    }

    func matches(_ tolerance: Tolerance) -> Bool {
        switch tolerance {
        case .exact: largestDifference == 0
        case .within(let levels): largestDifference <= levels
        case .visuallyIdentical: largestDifference <= 8
        }
    }

    func require(_ tolerance: Tolerance) throws {
        guard matches(tolerance) else { throw ImageMismatch(description: "differs by \(largestDifference) levels (\(tolerance))") }
    }
}
