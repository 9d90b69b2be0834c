import Foundation
import Testing

/// `imago-harness soak` and `client`, run as the scripts run them: a short soak must pass every check.
@Suite struct SoakCommandTests {
    @Test func aShortSoakPassesEveryCheck() async throws {
        let run = try await HarnessProcess.run(["soak", "--requests", "500", "--concurrency", "16", "--json"])
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

    @Test func clientReportsNanosecondsPerHit() async throws {
        let run = try await HarnessProcess.run(["client", "--iterations", "1000", "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let names = run.stdout.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["benchmark"] as? String
        }
        #expect(names == ["client-downloadImage-hit", "client-setImage-hit", "memory-cache-hit"])
    }
}
