import ImageFixtures
import Imago
import Testing

/// The processing operations' long loops check the running `WorkDeadline`
/// (ported from the server's `eachLongLoopStopsOnceTheDeadlineHasPassed`):
/// past it they stop early, `run` throws instead of returning the partial
/// result, and with time left `run` returns the whole one. (Rotations,
/// mirrors and crops have no such loop.)
@Suite struct OperationDeadlineTests {
    /// A photo-like 300x200 image with some transparency, so that each
    /// operation has many rows and a flatten has work to do.
    static let photo = ProcessingFixtures.photo(width: 300, height: 200, varyingAlpha: true)
    /// The photo framed in white: a border for a trim to find.
    static let framed = ProcessingFixtures.framed(photo)
    static let mark = Image(width: 6, height: 4, pixelFormat: .rgba8, pixels: (0..<96).map { UInt8(($0 * 37) % 256) | 1 })

    enum Operation: String, CaseIterable, Sendable {
        case placed, extended, padded, flattened, sharpened, blurredBySigma, pixelated, trimmed, compositedAtAGravity, compositedTiled

        func apply() -> Image {
            let photo = OperationDeadlineTests.photo, mark = OperationDeadlineTests.mark
            return switch self {
            case .placed: photo.placed(onWidth: 340, height: 230, x: 25, y: 10, background: .white)
            case .extended: photo.extended(toWidth: 400, height: 300, gravity: .southEast, background: ImageColor(red: 0, green: 80, blue: 0))
            case .padded: photo.padded(top: 50, right: 50, bottom: 50, left: 50)
            case .flattened: photo.flattened(onto: ImageColor(red: 20, green: 40, blue: 60))
            case .sharpened: photo.sharpened(sigma: 4)
            case .blurredBySigma: photo.blurred(sigma: 8)
            case .pixelated: photo.pixelated(blockSize: 5)
            case .trimmed: OperationDeadlineTests.framed.trimmed(threshold: 10)
            case .compositedAtAGravity: photo.composited(with: mark, at: .gravity(.center), opacity: 0.7)
            case .compositedTiled: photo.composited(with: mark, at: .tiled(), opacity: 1)
            }
        }
    }

    @Test(arguments: Operation.allCases)
    func eachLongLoopStopsOnceTheDeadlineHasPassed(operation: Operation) throws {
        let whole = operation.apply()
        let passed = WorkDeadline(uptimeNanoseconds: 0)
        #expect(passed.hasPassed)
        let stopped = WorkDeadline.$current.withValue(passed) { operation.apply() }
        #expect(stopped != whole, "\(operation) ran to the end past its deadline")
        #expect(throws: WorkDeadlineExceeded.self) { try passed.run { operation.apply() } }
        // With time left, the same work under a deadline is the whole result.
        let later = WorkDeadline(secondsFromNow: 3600)
        #expect(try later.run { operation.apply() } == whole)
    }

    @Test func theWholeResultsAreWhatTheOperationsPromise() {
        // So that a result that merely differs is not mistaken for a stopped one.
        #expect((Operation.trimmed.apply().width, Operation.trimmed.apply().height) == (300, 200))
        #expect(Operation.padded.apply().pixel(x: 50, y: 50) == Self.photo.pixel(x: 0, y: 0))
        #expect(Operation.placed.apply().pixel(x: 25, y: 10) == Array(Self.photo.pixel(x: 0, y: 0)))
        #expect(Operation.compositedTiled.apply() != Self.photo)
    }
}
