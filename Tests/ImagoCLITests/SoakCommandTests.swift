import Foundation
import Testing

/// `imago bench soak`, run as a user would: a short soak must pass every check.
@Suite struct SoakCommandTests {
    @Test func aShortSoakPassesEveryCheck() throws {
        let run = try Self.imago(["bench", "soak", "--requests", "500", "--concurrency", "16", "--json"])
        #expect(run.status == 0, "\(run.stderr)\n\(run.stdout)")
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(lines.first.map(String.init)?.utf8 ?? "".utf8)) as? [String: Any])
        #expect(object["benchmark"] as? String == "soak")
        #expect(object["passed"] as? Bool == true, "\(run.stdout)")
        #expect(object["completed"] as? Int == 500)
        #expect(object["untyped"] as? Int == 0)
        #expect(object["unexpected"] as? Int == 0)
        let checks = try #require(object["checks"] as? [String: Bool])
        #expect(checks.count >= 6)
        #expect(checks.filter { !$0.value }.map(\.key) == [])
        // Both images and faults were sent.
        let outcomes = try #require(object["outcomes"] as? [String: Int])
        #expect(outcomes["ok", default: 0] > 300)
        #expect(outcomes["dataLoadingFailed", default: 0] > 0)
        #expect(outcomes["responseRejected", default: 0] > 0)
        #expect(outcomes["decodingFailed", default: 0] > 0)
    }

    /// Runs the `imago` binary next to the test bundle.
    static func imago(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("imago")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imago-soak-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("stdout"), err = directory.appendingPathComponent("stderr")
        try Data().write(to: out)
        try Data().write(to: err)
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        process.waitUntilExit()
        return (process.terminationStatus, try String(contentsOf: out, encoding: .utf8), try String(contentsOf: err, encoding: .utf8))
    }
}
