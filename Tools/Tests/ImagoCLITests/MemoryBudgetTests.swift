import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import LoopbackServer
import Testing

/// `imago serve --max-memory`: legal requests that each allocate a lot
/// (a tiny source forced to 2048x2048 JPEG XL, the costliest encoder) are
/// admitted by the bytes they will hold, so they queue instead of growing
/// the process together.
@Suite struct MemoryBudgetTests {
    /// The most resident memory the process has had (`VmHWM`), and now (`VmRSS`), in kB.
    static func memory(of pid: Int32) -> (peak: Int, now: Int) {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        func field(_ name: String) -> Int {
            status.split(separator: "\n").first { $0.hasPrefix(name + ":") }
                .flatMap { Int($0.split(whereSeparator: \.isWhitespace).dropFirst().first ?? "") } ?? 0
        }
        return (field("VmHWM"), field("VmRSS"))
    }

    /// `renders` distinct renders at once against a server with `maxMemory`
    /// megabytes; the peak growth of its resident memory, in kB.
    static func peakGrowth(maxMemory: Int, renders: Int, origin: LoopbackServer) async throws -> Int {
        let server = try await ServeTests.Running(["--unsigned", "--allow-private-networks", "--workers", "2", "--max-memory", "\(maxMemory)"])
        let base = memory(of: server.process.processIdentifier).now
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<renders {
                group.addTask {
                    try await server.get(ServeTests.imagePath("cb:\(index)/rs:force:2048:2048:1", origin.url("/tiny.png")) + "@jxl").status
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: renders))
        let peak = memory(of: server.process.processIdentifier).peak
        #expect(await server.stop() == 0)
        return peak - base
    }

    @Test func concurrentLargeRendersQueueWithinTheBudget() async throws {
        let tiny = try ImageEncoders.png().encode(TestImages.gradient(width: 4, height: 4))
        let origin = try await LoopbackServer.start(routes: ["/tiny.png": .ok(tiny, contentType: "image/png")])
        // One 2048x2048 JPEG XL render is estimated at about 220 MB: a budget
        // of 300 MB admits one at a time, where the two workers would take two.
        // Compared with one render alone, not with an unbounded run, whose
        // two renders overlap only as the machine's scheduling lets them.
        let single = try await Self.peakGrowth(maxMemory: 300, renders: 1, origin: origin)
        let budgeted = try await Self.peakGrowth(maxMemory: 300, renders: 6, origin: origin)
        // Relative, not absolute, so that a sanitizer's shadow memory cannot decide it.
        #expect(Double(budgeted) < 1.5 * Double(single),
                "six renders under the budget grew the process by \(budgeted / 1024) MB, one alone by \(single / 1024) MB")
        try await origin.stop()
    }
}
