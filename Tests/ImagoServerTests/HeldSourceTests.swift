#if Server && os(Linux)
import Foundation
import Imago
import ImagoServer
import LoopbackServer
import Testing

/// Downloaded sources that wait for their render are bounded by a quarter
/// of the memory budget: one that does not fit beside those held is
/// refused as saturated (503, `Retry-After`) instead of waiting with its
/// bytes, and one that fits is served meanwhile.
@Suite struct HeldSourceTests {
    @Test func aSourceBeyondTheHeldShareIsRefusedAsSaturated() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imago-held-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // A rasterizer that never answers the first time (the render holding the first source
        // stays in progress) and fails at once after that.
        let started = directory.appendingPathComponent("started")
        let executable = directory.appendingPathComponent("stuck-rasterizer")
        try SVGIsolationTests.writeExecutable(
            "[ -e '\(started.path)' ] && exit 1\necho $$ > '\(started.path).tmp' && mv '\(started.path).tmp' '\(started.path)'\nexec sleep 300",
            to: executable)
        // 700 KB each: two do not fit in the 1 MB share of a 4 MB budget; the small PNG does.
        let padding = String(repeating: "x", count: 700_000)
        let svg = Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><!-- \#(padding) --><rect width="5" height="5"/></svg>"#.utf8)
        let origin = try await Fixture.origin([
            "/first.svg": .ok(svg, contentType: "image/svg+xml"),
            "/second.svg": .ok(svg, contentType: "image/svg+xml"),
        ])
        let configuration = Fixture.configuration {
            $0.maximumMemory = 4 << 20
            $0.svgRasterizerExecutable = executable
            $0.svgRasterizerTimeout = 300
        }
        try await Fixture.withServer(configuration, over: .live) { client, _ in
            try await ConcurrentClient.with(port: client.port, connections: 4) { concurrent in
                let first = Task { try await concurrent.get(Fixture.path("w:8", origin.url("/first.svg"), extension: "png")) }
                var pid: Int32?
                for _ in 0..<6000 where pid == nil {
                    pid = (try? String(contentsOf: started, encoding: .utf8)).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
                    if pid == nil { try await Task.sleep(for: .milliseconds(10)) }
                }
                let stuck = try #require(pid, "the first render reached its rasterizer")
                let refused = try await concurrent.get(Fixture.path("w:8", origin.url("/second.svg"), extension: "png"))
                #expect(refused.status == 429)
                #expect(refused.errorCode == "saturated")
                #expect(refused.retryAfter != nil)
                let small = try await concurrent.get(Fixture.path("w:8", origin.url("/a.png")))
                #expect(small.status == 200, "a source that fits beside the held one is served")
                // The stuck rasterizer goes: the first render fails (422) and gives its share back.
                kill(stuck, SIGKILL)
                #expect(try await first.value.status == 422)
                let again = try await concurrent.get(Fixture.path("w:8", origin.url("/second.svg"), extension: "png"))
                #expect(again.status == 422, "let in once the share is free (then failed by the rasterizer)")
            }
        }
    }
}
#endif
