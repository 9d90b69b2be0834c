#if SnapshotTesting
import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import SnapshotTesting

extension Snapshotting where Value == Image, Format == Data {
    /// Images recorded as PNG references and compared with
    /// ``ImagoTesting/ImageComparison`` within `tolerance`, on every
    /// platform (swift-snapshot-testing's own image strategies need UIKit
    /// or AppKit).
    ///
    /// ```swift
    /// import ImagoSnapshotTesting
    /// import SnapshotTesting
    ///
    /// @Test func thumbnail() throws {
    ///     assertSnapshot(of: try makeThumbnail(), as: .image(tolerance: .visuallyIdentical))
    /// }
    /// ```
    ///
    /// A failure names the measure, its bound and its value, and the folder
    /// holding the actual, expected and difference images (also attached to
    /// the failure as data).
    public static func image(tolerance: ImageTolerance = .visuallyIdentical) -> Snapshotting {
        Snapshotting<Data, Data>(
            pathExtension: "png",
            diffing: .diff(
                toData: { $0 },
                fromData: { $0 },
                diffV2: { reference, new in ImageSnapshotDiff.compare(new, against: reference, tolerance: tolerance) }
            )
        ).pullback { image in (try? ImageEncoders.png().encode(image)) ?? Data() }
    }
}

/// The comparison behind ``SnapshotTesting/Snapshotting/image(tolerance:)``.
enum ImageSnapshotDiff {
    /// `nil` when the PNG `new` matches the PNG `reference`; else the
    /// failure message and the difference image.
    static func compare(_ new: Data, against reference: Data, tolerance: ImageTolerance) -> (String, [DiffAttachment])? {
        var options = ImageDecodingOptions()
        options.colorManagement = .keepOriginal
        let decoder = ImageDecoders.png()
        guard let expected = try? decoder.decode(reference, options: options) else {
            return ("the reference is not a readable PNG file (\(reference.count) bytes)", [])
        }
        guard let actual = try? decoder.decode(new, options: options) else {
            return ("the image could not be encoded as PNG", [])
        }
        let comparison = ImageComparison(actual, expected)
        do {
            try comparison.require(tolerance, name: "snapshot")
            return nil
        } catch {
            var attachments: [DiffAttachment] = []
            if let folder = error.artifacts, let difference = try? Data(contentsOf: folder.appendingPathComponent("difference.png")) {
                attachments.append(.data(difference, name: "difference.png"))
            }
            return (error.description, attachments)
        }
    }
}
#endif
