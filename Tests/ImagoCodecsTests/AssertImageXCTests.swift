import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import ImagoTestingSupport
import XCTest

/// The assertions under XCTest, where there is no current Swift Testing
/// test: a match passes, and the snapshot reference the Swift Testing
/// suite checks is found and matched from here too.
final class AssertImageXCTests: XCTestCase {
    func testAMatchingImagePassesAndReturnsItsComparison() throws {
        let photo = TestImages.photo(width: 96, height: 72, seed: 5)
        let jpeg = try ImageDecoders.all.decode(ImageEncoders.jpeg(quality: 90).encode(photo))
        let comparison = assertImage(jpeg, matches: photo)
        XCTAssertTrue(comparison.matches(.visuallyIdentical))
        XCTAssertGreaterThan(comparison.psnr, 30)
    }

    func testTheSnapshotOfTheSwiftTestingSuiteMatchesHere() {
        let references = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("__Snapshots__/ImageSnapshotTests").path
        assertImageSnapshot(of: ImageSnapshotTests.badge(), named: "1", snapshotDirectory: references,
                            testName: "aThumbnailMatchesItsCommittedReference()")
    }
}
