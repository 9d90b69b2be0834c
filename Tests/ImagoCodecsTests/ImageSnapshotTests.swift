import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import ImagoTestingSupport
import Testing
#if SnapshotTesting
import ImagoSnapshotTesting
import SnapshotTesting
#endif

/// Snapshot tests of images on Linux: the built-in assertImageSnapshot and
/// the swift-snapshot-testing strategy, against references committed in
/// `__Snapshots__`, and what each does when the picture changes or no
/// reference exists yet.
@Suite struct ImageSnapshotTests {
    /// The picture every test here renders: a thumbnail of the seeded photo with a badge.
    static func badge() -> Image {
        TestImages.photo(width: 320, height: 240, seed: 3)
            .resized(width: 96, height: 72, filter: .lanczos3)
            .composited(with: TestImages.graphic(width: 24, height: 18, seed: 2), at: .gravity(.northEast, offsetX: 4, offsetY: 4))
    }

    @Test func aThumbnailMatchesItsCommittedReference() {
        assertImageSnapshot(of: Self.badge())
    }

    @Test func aJPEGRoundTripIsStillVisuallyIdenticalToTheReference() throws {
        let jpeg = try ImageDecoders.all.decode(ImageEncoders.jpeg(quality: 85).encode(Self.badge()))
        // The reference of the test above, made from the image before JPEG.
        assertImageSnapshot(of: jpeg, named: "1", .visuallyIdentical, testName: "aThumbnailMatchesItsCommittedReference()")
    }

    @Test func aChangedPictureFailsNamingTheMeasureAndTheFolder() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imago-snapshots-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        // Each call of a test without a name is numbered; named, they share one reference.
        #expect(verifyImageSnapshot(of: Self.badge(), named: "badge", snapshotDirectory: folder.path)?.contains("recorded a new reference") == true)
        #expect(verifyImageSnapshot(of: Self.badge(), named: "badge", snapshotDirectory: folder.path) == nil)
        let moved = Self.badge().cropped(x: 2, y: 0, width: 94, height: 72).resized(width: 96, height: 72, filter: .lanczos3)
        let failure = try #require(verifyImageSnapshot(of: moved, named: "badge", snapshotDirectory: folder.path))
        #expect(failure.contains("does not match: the images are not visually identical"))
        #expect(failure.contains("low-frequency difference"))
        #expect(failure.contains("actual, expected and difference images: /"))
    }

    @Test func aMissingReferenceIsRecordedAndTheTestFailsOnce() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imago-snapshots-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        withKnownIssue {
            assertImageSnapshot(of: Self.badge(), named: "new", snapshotDirectory: folder.path)
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("recorded a new reference snapshot") }
        }
        let recorded = try ImageDecoders.png().decode(Data(contentsOf: folder.appendingPathComponent(
            "aMissingReferenceIsRecordedAndTheTestFailsOnce.new.png")))
        #expect(ImageComparison(recorded, Self.badge()).matches(.exact))
        assertImageSnapshot(of: Self.badge(), named: "new", snapshotDirectory: folder.path)
    }

    /// A reference that is not an image (a merge left conflict markers in
    /// it, a tool truncated it) fails with its path and the decoder's
    /// error, and is not overwritten.
    @Test func aReferenceThatIsNotAnImageFailsNamingIt() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imago-snapshots-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let reference = folder.appendingPathComponent("aReferenceThatIsNotAnImageFailsNamingIt.badge.png")
        let garbage = Data("<<<<<<< HEAD\nnot a picture\n".utf8)
        try garbage.write(to: reference)
        let failure = try #require(verifyImageSnapshot(of: Self.badge(), named: "badge", snapshotDirectory: folder.path))
        #expect(failure.contains(reference.path))
        #expect(try Data(contentsOf: reference) == garbage)
    }

    @Test func assertImageReportsToSwiftTesting() {
        let photo = TestImages.photo(width: 64, height: 48)
        withKnownIssue {
            assertImage(photo.resized(width: 64, height: 47), matches: photo)
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("the sizes differ") }
        }
        assertImage(photo, matches: photo, .exact)
    }

    @Test func aColourManagedSnapshotKeepsItsProfile() {
        assertImageSnapshot(of: TestImages.displayP3Photo(width: 48, height: 36), .exact)
    }

    #if SnapshotTesting
    @Test func theSnapshotTestingStrategyMatchesItsReference() {
        assertSnapshot(of: Self.badge(), as: .image(tolerance: .visuallyIdentical))
    }

    @Test func theSnapshotTestingStrategyFailsAChangedPicture() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imago-snapshots-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        _ = verifySnapshot(of: Self.badge(), as: .image(), named: "badge", record: .all, snapshotDirectory: folder.path)
        #expect(verifySnapshot(of: Self.badge(), as: .image(), named: "badge", record: .never, snapshotDirectory: folder.path) == nil)
        let tinted = Self.badge().composited(with: TestImages.solid(width: 96, height: 72, red: 255, green: 0, blue: 0), opacity: 0.2)
        let failure = try #require(verifySnapshot(of: tinted, as: .image(), named: "badge", record: .never, snapshotDirectory: folder.path))
        #expect(failure.contains("the images are not visually identical"))
        #expect(failure.contains("mean difference"))
    }
    #endif
}
