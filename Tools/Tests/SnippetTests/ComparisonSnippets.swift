// The README's and ImagoTesting's snippets about images made by the code
// under test: comparisons, assertions and snapshots.
import Foundation
import Imago
import ImagoCodecs
import ImagoSnapshotTesting
import ImagoTesting
import ImagoTestingSupport
import SnapshotTesting
import Testing

// snippet: readme-image-comparison
@Test func thumbnailKeepsThePicture() throws {
    let photo = TestImages.photo(width: 1200, height: 900, seed: 4)   // made in code, the same on every run
    let reference = photo.resized(width: 400, height: 300, filter: .lanczos3)
    let thumbnail = try ImageDecoders.all.decode(ImageEncoders.jpeg(quality: 80).encode(photo.resized(toFit: 400, height: 300)))

    let comparison = ImageComparison(thumbnail, reference)
    #expect(comparison.ssim > 0.9)                      // every measure is a plain value
    try comparison.require(.visuallyIdentical)          // or throws ImageMismatch, which says why
    assertImage(thumbnail, matches: reference)          // ImagoTestingSupport: fails the Swift Testing or XCTest test
}
// end snippet

enum ComparisonSnippets {
    /// Compiled, not run: the references would live beside this file.
    static func snapshots(badge: Image) {
        // snippet: readme-image-snapshot
        // The reference is __Snapshots__/<test file>/<test>.1.png beside the test; when it is
        // missing it is recorded and the test fails once (IMAGO_RECORD_SNAPSHOTS=1 records again).
        assertImageSnapshot(of: badge)
        assertImageSnapshot(of: badge, named: "small", .within(levels: 2))

        // swift-snapshot-testing, with the same comparison:
        assertSnapshot(of: badge, as: .image(tolerance: .visuallyIdentical))
        // end snippet
    }
}
