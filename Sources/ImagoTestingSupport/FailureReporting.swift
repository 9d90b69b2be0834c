import Testing
#if canImport(XCTest)
import XCTest
#endif

/// Where a failure is reported: the line of the test that called the assertion.
public struct AssertionSite: Sendable {
    let fileID: String
    let filePath: StaticString
    let line: UInt
    let column: UInt

    /// Records `message` as a failure of the test running now: an issue in
    /// Swift Testing, `XCTFail` under XCTest.
    func fail(_ message: String) {
        if Test.current != nil {
            Issue.record(Comment(rawValue: message),
                         sourceLocation: SourceLocation(fileID: fileID, filePath: "\(filePath)", line: Int(line), column: Int(column)))
            return
        }
        #if canImport(XCTest)
        XCTFail(message, file: filePath, line: line)
        #else
        Issue.record(Comment(rawValue: message),
                     sourceLocation: SourceLocation(fileID: fileID, filePath: "\(filePath)", line: Int(line), column: Int(column)))
        #endif
    }
}
