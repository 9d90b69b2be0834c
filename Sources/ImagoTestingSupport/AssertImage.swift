import Foundation
import Imago
import ImagoTesting

/// Fails the running test, in Swift Testing or XCTest, unless `actual`
/// matches `expected` within `tolerance`; the failure names the measure,
/// its bound and its value, and the folder where the actual, expected and
/// difference images were written.
///
/// ```swift
/// @Test func thumbnailKeepsThePicture() throws {
///     let thumbnail = try TestImages.photo(width: 800, height: 600).resized(to: ImageSize(width: 200, height: 150))
///     assertImage(thumbnail, matches: reference, .visuallyIdentical)
/// }
/// ```
///
/// - Returns: The comparison, for further checks.
@discardableResult
public func assertImage(
    _ actual: Image, matches expected: Image, _ tolerance: ImageTolerance = .visuallyIdentical,
    name: String = #function, fileID: String = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
) -> ImageComparison {
    let comparison = ImageComparison(actual, expected)
    do {
        try comparison.require(tolerance, name: name)
    } catch {
        AssertionSite(fileID: fileID, filePath: filePath, line: line, column: column).fail(error.description)
    }
    return comparison
}
