import Foundation
import Imago
import ImagoCodecs
import ImagoTesting

/// Compares `image` with a reference PNG kept beside the test file, and
/// fails the running test (Swift Testing or XCTest) unless they match
/// within `tolerance`, naming the measure, its bound, its value and the
/// folder of the actual, expected and difference images.
///
/// The reference is `__Snapshots__/<test file>/<test>.<name>.png` next to
/// the test's source file (`name` is the call's number in the test,
/// counted from 1, unless given). When it is missing, or `record` is true,
/// or `IMAGO_RECORD_SNAPSHOTS` is set in the environment, the image is
/// written as the new reference and the test fails once, so that a
/// reference is never made silently: look at it, commit it, run again.
///
/// ```swift
/// @Test func badge() throws {
///     let badge = try renderBadge(count: 3)
///     assertImageSnapshot(of: badge)                              // __Snapshots__/BadgeTests/badge.1.png
///     assertImageSnapshot(of: badge.resized(...), named: "small", .within(levels: 2))
/// }
/// ```
///
/// Images with a colour profile keep it: the reference embeds it and is
/// read back without conversion.
public func assertImageSnapshot(
    of image: Image, named name: String? = nil, _ tolerance: ImageTolerance = .visuallyIdentical, record: Bool = false,
    snapshotDirectory: String? = nil,
    testName: String = #function, fileID: String = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
) {
    if let failure = verifyImageSnapshot(of: image, named: name, tolerance, record: record, snapshotDirectory: snapshotDirectory,
                                         testName: testName, filePath: "\(filePath)") {
        AssertionSite(fileID: fileID, filePath: filePath, line: line, column: column).fail(failure)
    }
}

/// What ``assertImageSnapshot(of:named:_:record:snapshotDirectory:testName:fileID:filePath:line:column:)``
/// checks, returned instead of reported: the failure message, or `nil`
/// when `image` matches its reference. For a test framework of your own,
/// or to check a failure's wording.
///
/// - Parameter snapshotDirectory: The folder of the references, instead
///   of `__Snapshots__/<test file>` beside the test file.
public func verifyImageSnapshot(
    of image: Image, named name: String? = nil, _ tolerance: ImageTolerance = .visuallyIdentical, record: Bool = false,
    snapshotDirectory: String? = nil, testName: String = #function, filePath: String = #filePath
) -> String? {
    let reference = SnapshotReference(filePath: filePath, directory: snapshotDirectory, testName: testName, name: name)
    do {
        let recording = record || ProcessInfo.processInfo.environment["IMAGO_RECORD_SNAPSHOTS"].map { !$0.isEmpty && $0 != "0" } == true
        guard !recording, let expected = try reference.read() else {
            try reference.write(image)
            return """
                recorded a new reference snapshot, \(reference.url.path): check it, commit it and run the test again \
                (this run fails so that no reference is made silently)
                """
        }
        try ImageComparison(image, expected).require(tolerance, name: "\(reference.testFolder)-\(reference.name)")
        return nil
    } catch let mismatch as ImageMismatch {
        return "snapshot \(reference.url.lastPathComponent) does not match: \(mismatch.description)"
    } catch {
        return "snapshot \(reference.url.path): \(error)"
    }
}

/// A reference image on disk, named after its test file, test and call.
struct SnapshotReference {
    let url: URL
    let testFolder: String
    let name: String

    private static let callCounts = Locked<[String: Int]>([:])

    init(filePath: String, directory: String?, testName: String, name: String?) {
        let file = URL(fileURLWithPath: filePath)
        testFolder = file.deletingPathExtension().lastPathComponent
        let test = Self.safe(testName)
        let key = "\(filePath)#\(test)"
        self.name = name.map(Self.safe) ?? String(Self.callCounts.withLock { counts in
            counts[key, default: 0] += 1
            return counts[key]!
        })
        let folder = directory.map { URL(fileURLWithPath: $0) }
            ?? file.deletingLastPathComponent().appendingPathComponent("__Snapshots__").appendingPathComponent(testFolder)
        url = folder.appendingPathComponent("\(test).\(self.name).png")
    }

    /// The reference, or `nil` when there is none yet.
    ///
    /// - Throws: when the file exists but is not a readable image.
    func read() throws -> Image? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let data = try Data(contentsOf: url)
        var options = ImageDecodingOptions()
        options.colorManagement = .keepOriginal
        return try ImageDecoders.png().decode(data, options: options)
    }

    /// Writes `image` as the reference, whole or not at all.
    func write(_ image: Image) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try ImageEncoders.png().encode(image).write(to: url, options: .atomic)
    }

    /// `text` with anything but letters, digits, `-` and `_` made `-`.
    static func safe(_ text: String) -> String {
        String(text.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "-" })
            .trimmingCharacters(in: CharacterSet(charactersIn: "-"))
    }
}
