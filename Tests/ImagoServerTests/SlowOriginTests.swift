#if Server && os(Linux)
import Foundation
import HummingbirdTesting
import Imago
import ImagoServer
import LoopbackServer
import Testing

/// Origins cannot starve each other: a slow host holds at most its own
/// download slots, its extra requests wait a bounded time (then 504) or
/// are refused at once, and another host's images are served meanwhile.
@Suite struct SlowOriginTests {
    /// A source that takes about 20 s: a quarter of the JPEG every 5 s.
    static let crawling = ServedResponse.ok(Fixture.jpeg, contentType: "image/jpeg")
        .delivered(.trickle(chunkSize: Fixture.jpeg.count / 4 + 1, interval: .seconds(5)))

    @Test func aSlowHostWaitsOnItselfAndAnotherHostIsServedMeanwhile() async throws {
        var routes: [String: ServedResponse] = [:]
        for index in 0..<6 { routes["/slow\(index).jpg"] = Self.crawling }
        let slowHost = try await Fixture.origin(routes)
        let fastHost = try await Fixture.origin()
        let configuration = Fixture.configuration {
            $0.maximumDownloadsPerHost = 2
            $0.hostSlotWait = 1
            $0.timeout = 60
        }
        try await Fixture.withServer(configuration, over: .live) { client, _ in
            try await ConcurrentClient.with(port: client.port, connections: 16) { concurrent in
                let slow = Task {
                    try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                        for index in 0..<6 {
                            group.addTask {
                                let response = try await concurrent.get(Fixture.path("w:40", slowHost.url("/slow\(index).jpg")))
                                return (response.status, response.errorCode)
                            }
                        }
                        return try await group.reduce(into: []) { $0.append($1) }
                    }
                }
                for _ in 0..<500 where slowHost.requestCount(for: "/slow0.jpg") + slowHost.requestCount(for: "/slow1.jpg")
                    + slowHost.requestCount(for: "/slow2.jpg") < 1 {
                    try await Task.sleep(for: .milliseconds(10))
                }
                // While the slow host holds its two slots, the other host answers at once.
                let fast = try await concurrent.get(Fixture.path("w:40", fastHost.url("/a.png")))
                #expect(fast.status == 200)
                let started = (0..<6).map { slowHost.requestCount(for: "/slow\($0).jpg") }.reduce(0, +)
                #expect(started == 2, "only the host's two slots reached it: \(started)")
                slow.cancel()
            }
        }
    }

    @Test func downloadsBeyondAHostsSlotsFailAsTimedOutInsteadOfStalling() async throws {
        var routes: [String: ServedResponse] = [:]
        for index in 0..<6 { routes["/slow\(index).jpg"] = Self.crawling }
        let slowHost = try await Fixture.origin(routes)
        let configuration = Fixture.configuration {
            $0.maximumDownloadsPerHost = 2
            $0.hostSlotWait = 1
            $0.timeout = 60
        }
        try await Fixture.withServer(configuration, over: .live) { client, _ in
            try await ConcurrentClient.with(port: client.port, connections: 16) { concurrent in
                // Two run (and crawl); the four others wait a second for a slot of the host, then fail.
                let results = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                    for index in 0..<6 {
                        group.addTask {
                                let response = try await concurrent.get(Fixture.path("w:40", slowHost.url("/slow\(index).jpg")))
                                return (response.status, response.errorCode)
                            }
                    }
                    var results: [(Int, String?)] = []
                    // The four that do not run answer long before the two that do.
                    for try await result in group {
                        results.append(result)
                        if results.count == 4 { group.cancelAll(); break }
                    }
                    return results
                }
                #expect(results.count == 4)
                #expect(results.allSatisfy { $0.0 == 504 && $0.1 == "source_timed_out" }, "\(results)")
            }
        }
    }

    /// Most deployments have one origin: a burst of distinct images from it
    /// waits for the host's slots in turn, and every one is served.
    @Test func aSingleOriginGetsFourDownloadsPerWorker() {
        // Enough for one bucket or CDN to keep every worker busy (Benchmarks/workers.md).
        #expect(ImageServerConfiguration.downloadsPerHost(workers: 1) == 16)
        #expect(ImageServerConfiguration.downloadsPerHost(workers: 2) == 16)
        #expect(ImageServerConfiguration.downloadsPerHost(workers: 16) == 64)
        let configuration = ImageServerConfiguration()
        #expect(configuration.maximumDownloadsPerHost == ImageServerConfiguration.downloadsPerHost(workers: configuration.workers))
        // Half of all downloads: a slow host never holds the others'.
        #expect(configuration.maximumDownloadsPerHost * 2 <= configuration.maximumConcurrentDownloads)
    }

    @Test func aBurstFromOneHostIsServedWhole() async throws {
        var routes: [String: ServedResponse] = [:]
        for index in 0..<48 { routes["/burst\(index).jpg"] = .ok(Fixture.jpeg, contentType: "image/jpeg") }
        let origin = try await Fixture.origin(routes)
        // The wait bound is what this test is not about: a loaded test machine may take seconds per image.
        let configuration = Fixture.configuration {
            $0.maximumDownloadsPerHost = 2
            $0.hostSlotWait = 120
        }
        try await Fixture.withServer(configuration, over: .live) { client, _ in
            try await ConcurrentClient.with(port: client.port, connections: 48) { concurrent in
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for index in 0..<48 {
                        group.addTask { try await concurrent.get(Fixture.path("w:40", origin.url("/burst\(index).jpg"))).status }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses == Array(repeating: 200, count: 48))
            }
        }
    }

    @Test func rawStreamsHaveSlotsOfTheirOwn() async throws {
        let slowHost = try await Fixture.origin(["/slow.jpg": Self.crawling, "/slow2.jpg": Self.crawling])
        let fastHost = try await Fixture.origin()
        let configuration = Fixture.configuration {
            $0.maximumConcurrentStreams = 1
            $0.maximumConcurrentDownloads = 1
            $0.timeout = 60
        }
        try await Fixture.withServer(configuration, over: .live) { client, _ in
            try await ConcurrentClient.with(port: client.port, connections: 8) { concurrent in
                let streaming = Task { try await concurrent.get(Fixture.path("raw:1", slowHost.url("/slow.jpg"))) }
                for _ in 0..<500 where slowHost.requestCount(for: "/slow.jpg") == 0 { try await Task.sleep(for: .milliseconds(10)) }
                // The one stream slot is taken: a second stream is refused, an image is not.
                let second = try await concurrent.get(Fixture.path("raw:1", slowHost.url("/slow2.jpg")))
                #expect(second.status == 429)
                let image = try await concurrent.get(Fixture.path("w:40", fastHost.url("/a.png")))
                #expect(image.status == 200)
                streaming.cancel()
            }
        }
    }
}
#endif
