#if Server && os(Linux)
@_spi(Testing) import Imago
import Foundation
import HummingbirdTesting
import ImagoServer
import LoopbackServer
import Testing
import AsyncHTTPClient

/// Many requests for one image are one download, one decode and one encode,
/// and take one place in the queue.
@Suite struct CoalescingTests {
    /// A queue of one: requests that join need no place.
    let configuration = Fixture.configuration {
        $0.workers = 1
        $0.maximumQueue = 0
    }

    func slowOrigin() async throws -> LoopbackServer {
        try await Fixture.origin([
            "/slow.jpg": ServedResponse.ok(Fixture.jpeg, contentType: "image/jpeg")
                .delivered(.trickle(chunkSize: Fixture.jpeg.count / 4 + 1, interval: .milliseconds(250))),
        ])
    }

    @Test func tenThousandRequestsAtOnceShareOneJob() async throws {
        let origin = try await slowOrigin()
        // Through the router: ten thousand handlers really run at once.
        try await Fixture.withServer(configuration, over: .router) { client, server in
            let path = Fixture.path("rs:fit:64:64", origin.url("/slow.jpg"))
            let etags = try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<10_000 {
                    group.addTask {
                        let response = try await client.execute(uri: path, method: .get)
                        return response.status == .ok ? response.header("ETag") : "status \(response.status)"
                    }
                }
                return try await group.reduce(into: [String?]()) { $0.append($1) }
            }
            #expect(etags.count == 10_000)
            #expect(Set(etags).count == 1, "\(Set(etags).prefix(3))")
            #expect(etags.first??.hasPrefix("\"") == true)
            #expect(server.pipeline.statistics.downloads == 1)
            #expect(server.decodeCount == 1)
        }
        #expect(origin.requestCount(for: "/slow.jpg") == 1)
    }

    @Test func concurrentConnectionsShareOneJob() async throws {
        let origin = try await slowOrigin()
        try await Fixture.withServer(configuration, over: .live) { client, server in
            let path = Fixture.path("rs:fit:64:64", origin.url("/slow.jpg"))
            let results = try await ConcurrentClient.with(port: client.port, connections: 64) { concurrent in
                try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                    for _ in 0..<64 {
                        group.addTask { let response = try await concurrent.get(path); return (response.status, response.etag) }
                    }
                    return try await group.reduce(into: [(Int, String?)]()) { $0.append($1) }
                }
            }
            #expect(results.allSatisfy { $0.0 == 200 })
            #expect(Set(results.map(\.1)).count == 1)
            #expect(server.pipeline.statistics.downloads == 1)
            #expect(server.decodeCount == 1)
        }
        #expect(origin.requestCount(for: "/slow.jpg") == 1)
    }
}

/// A client that goes away does not leave work or places behind.
@Suite struct DisconnectTests {
    @Test func aClientThatHangsUpLeavesNothingBehindAndWarmsTheCache() async throws {
        let origin = try await Fixture.origin([
            "/slow.jpg": ServedResponse.ok(Fixture.jpeg, contentType: "image/jpeg")
                .delivered(.trickle(chunkSize: Fixture.jpeg.count / 4 + 1, interval: .milliseconds(200))),
        ])
        let configuration = Fixture.configuration { $0.workers = 1; $0.maximumQueue = 0 }
        try await Fixture.withServer(configuration, over: .live) { client, server in
            let path = Fixture.path("rs:fit:64:64", origin.url("/slow.jpg"))
            // Gives up (and closes its connection) long before the source is in.
            try await ConcurrentClient.with(port: client.port, connections: 1) { impatient in
                await #expect(throws: (any Error).self) { _ = try await impatient.get(path, timeout: .milliseconds(100)) }
            }
            // The job finishes anyway and gives its place back.
            for _ in 0..<500 where server.jobsInProgress > 0 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(server.jobsInProgress == 0)
            let response = try await client.execute(uri: path, method: .get)
            #expect(response.status == .ok)
            #expect(server.pipeline.statistics.downloads == 1)
        }
        #expect(origin.requestCount(for: "/slow.jpg") == 1)
    }
}
#endif
