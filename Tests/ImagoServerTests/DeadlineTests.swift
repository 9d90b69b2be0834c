#if Server && os(Linux)
import ImageFixtures
import Foundation
import HummingbirdTesting
import Imago
import ImagoCodecs
import ImagoServer
import Testing

/// Every render has a deadline (imgproxy's `IMGPROXY_TIMEOUT`): past it
/// the answer is 503 `timeout`, and the render's loops stop at their next
/// check, so the worker is free for the next request.
@Suite struct DeadlineTests {
    func parse(_ options: String) throws -> ProcessingOptions {
        try ImageServerPath(parsing: "/insecure/\(options)/plain/http%3A%2F%2Fx%2Fa.png").options
    }

    /// A photo-like image large enough that each operation has many rows.
    static let photo = Fixture.photo(width: 300, height: 200)
    static let mark = Image(width: 6, height: 4, pixelFormat: .rgba8, pixels: (0..<96).map { UInt8(($0 * 37) % 256) | 1 })

    /// Under a deadline that has already passed, each loop stops at its
    /// first check: the result differs from the whole one, and
    /// `WorkDeadline.run` throws rather than return it.
    @Test(arguments: ["bl:8", "sh:4", "pix:5", "t:10", "rs:force:600:400:1", "wm:1:re:0:0:0.01", "wm:0.7:ce",
                      "pd:200:200:200:200", "rs:fit:600:600/ex:1"])
    func eachLongLoopStopsOnceTheDeadlineHasPassed(options: String) throws {
        let parsed = try parse(options)
        // A trim needs a border to find: the photo framed in white.
        let source = options.hasPrefix("t:") ? ProcessingFixtures.framed(Self.photo) : Self.photo
        let whole = parsed.apply(to: source, watermark: Self.mark)
        let passed = WorkDeadline(uptimeNanoseconds: 0)
        let stopped = WorkDeadline.$current.withValue(passed) { parsed.apply(to: source, watermark: Self.mark) }
        #expect(stopped.pixels != whole.pixels, "\(options) ran to the end past its deadline")
        #expect(throws: WorkDeadlineExceeded.self) { try passed.run { parsed.apply(to: source, watermark: Self.mark) } }
        // With time left, the same work under a deadline is the whole result.
        let later = WorkDeadline(secondsFromNow: 3600)
        #expect(try later.run { parsed.apply(to: source, watermark: Self.mark) }.pixels == whole.pixels)
    }

    /// A render far longer than the timeout, on the server's only worker:
    /// answered 503 at the deadline, and the next image is served, so the
    /// stopped render gave its worker back. (One case at a time: four such
    /// renders at once under the thread sanitizer, whose shadow memory
    /// multiplies their canvases, stalled the whole machine.)
    @Test(.serialized, arguments: ["rs:force:4000:4000:1/bl:100", "rs:force:4000:4000:1/sh:60", "rs:force:4000:4000:1/pix:2/sh:60/bl:100",
                                   "rs:force:4000:4000:1/wm:1:re:0:0:0.0001/bl:100"])
    func aRenderPastTheTimeoutIs503AndFreesItsWorker(options: String) async throws {
        let origin = try await Fixture.origin()
        let configuration = Fixture.configuration {
            $0.workers = 1
            $0.timeout = 3   // the renders take about 45 s in a debug build
            $0.watermark = Self.mark
        }
        try await Fixture.withServer(configuration) { client, _ in
            let slow = try await client.execute(uri: Fixture.path(options, origin.url("/a.png")), method: .get)
            #expect(slow.status == .serviceUnavailable, "\(options)")
            #expect(slow.errorCode == "timeout")
            // The stopped render gives its worker back at its next check: the next image is
            // served within seconds (tried a few times: under the thread sanitizer on a loaded
            // machine the check can come after the next request's own 3 s); a render that ran
            // on would hold the worker for most of a minute.
            var next = try await client.execute(uri: Fixture.path("w:20", origin.url("/a.jpg")), method: .get)
            for _ in 0..<4 where next.status != .ok {
                try await Task.sleep(for: .seconds(1))
                next = try await client.execute(uri: Fixture.path("w:20", origin.url("/a.jpg")), method: .get)
            }
            #expect(next.status == .ok, "the worker was free again: \(next.errorCode ?? "")")
        }
    }

    @Test func nestedDeadlinesKeepTheEarlier() throws {
        let soon = WorkDeadline(secondsFromNow: 1), late = WorkDeadline(secondsFromNow: 100)
        let seen = try soon.run { try late.run { WorkDeadline.current } }
        #expect(seen == soon)
        #expect(WorkDeadline.current == nil, "nothing outside run")
        #expect(WorkDeadline(secondsFromNow: .infinity).uptimeNanoseconds == .max)
        #expect(WorkDeadline(secondsFromNow: -5).hasPassed)
    }
}

#endif
