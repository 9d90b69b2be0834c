@_spi(Testing) import Imago
import Foundation
import HummingbirdTesting
@_spi(Testing) import ImagoServer
import LoopbackServer
import Testing

/// Many requests for one image are one download, one decode and one encode.
@Suite struct CoalescingTests {
    @Test func aThousandRequestsForOneImageShareOneJob() async throws {
        let origin = try await Fixture.origin([
            "/slow.jpg": ServedResponse.ok(Fixture.jpeg, contentType: "image/jpeg").delivered(.trickle(chunkSize: 2048, interval: .milliseconds(50))),
        ])
        // A queue of one: the joiners must not need places.
        let configuration = Fixture.configuration {
            $0.workers = 1
            $0.maximumQueue = 0
        }
        try await Fixture.withServer(configuration) { client, server in
            let path = Fixture.path("rs:fit:64:64", origin.url("/slow.jpg"))
            let etags = try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<1000 {
                    group.addTask {
                        let response = try await client.execute(uri: path, method: .get)
                        return response.status == .ok ? response.header("ETag") : "status \(response.status)"
                    }
                }
                return try await group.reduce(into: [String?]()) { $0.append($1) }
            }
            #expect(etags.count == 1000)
            #expect(Set(etags).count == 1, "\(Set(etags))")
            #expect(etags.first??.hasPrefix("\"") == true)
            #expect(server.pipeline.statistics.downloads == 1)
            #expect(server.pipeline.statistics.decodes == 1)
        }
        #expect(origin.requestCount(for: "/slow.jpg") == 1)
    }
}
