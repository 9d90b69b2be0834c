import Foundation
import FaultInjection
import LoopbackServer
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The loopback server's faults, seen from a plain socket: the bytes on the
/// wire, resets, and connections that end when the client goes.
@Suite struct FaultServerTests {
    static let body = Data((0..<5_000).map { UInt8($0 % 251) })

    // MARK: resets and short bodies

    @Test func resetBeforeHeadResetsWithNoBytes() async throws {
        let server = try await LoopbackServer.start(routes: [
            "/reset": ServedResponse.ok(Self.body, contentType: "image/png").delivered(.resetBeforeHead),
        ])
        let response = try await RawClient.get("/reset", port: server.port)
        #expect(response.bytes.isEmpty)
        #expect(response.error == ECONNRESET)
        #expect(await server.waitForOpenConnections())
        try await server.stop()
    }

    @Test func resetMidBodySendsTheHeadAndSomeBytesThenResets() async throws {
        let server = try await LoopbackServer.start(routes: [
            "/reset": ServedResponse.ok(Self.body, contentType: "image/png").delivered(.reset(afterBytes: 1_000)),
        ])
        let response = try await RawClient.get("/reset", port: server.port)
        #expect(response.error == ECONNRESET)
        #expect(response.status == 200)
        #expect(response.header("Content-Length") == "5000")
        #expect(response.body == Self.body.prefix(1_000))
        try await server.stop()
    }

    @Test func truncatedBodyIsShorterThanItsLengthAndEndsWithAClose() async throws {
        let server = try await LoopbackServer.start(routes: [
            "/cut": ServedResponse.ok(Self.body, contentType: "image/png").delivered(.truncated(afterBytes: 1_000)),
        ])
        let response = try await RawClient.get("/cut", port: server.port)
        #expect(response.error == nil)
        #expect(response.header("Content-Length") == "5000")
        #expect(response.body == Self.body.prefix(1_000))
        try await server.stop()
    }

    @Test func oversizedDeclaresTenGigabytesAndSendsAFewBytes() async throws {
        let server = try await LoopbackServer.start(routes: ["/huge": .oversized()])
        let response = try await RawClient.get("/huge", port: server.port)
        #expect(response.status == 200)
        #expect(response.header("Content-Length") == String(10 << 30))
        #expect(response.header("Content-Type") == "image/png")
        #expect(response.body.count == 8)
        #expect(response.error == nil)
        #expect(server.requestCount(for: "/huge") == 1)
        try await server.stop()
    }

    // MARK: bodies that never end

    @Test func endlessChunksKeepComingUntilTheClientLeaves() async throws {
        let server = try await LoopbackServer.start(routes: [
            "/endless": ServedResponse(headers: [("Content-Type", "image/png")]).delivered(.endlessChunks(chunkSize: 4_096, interval: .milliseconds(1))),
        ])
        let response = try await RawClient.get("/endless", port: server.port, stopAfter: 200_000)
        #expect(response.error == nil)
        #expect(response.header("Transfer-Encoding") == "chunked")
        #expect(response.header("Content-Length") == nil)
        #expect(response.body.count >= 200_000)
        #expect(response.body.starts(with: Data("1000\r\n".utf8)))
        // The client has closed: the server notices and stops writing.
        #expect(await server.waitForOpenConnections())
        #expect(server.acceptedConnections == 1)
        try await server.stop()
    }

    @Test func aOneBytePerSecondTrickleEndsWhenTheClientLeaves() async throws {
        let server = try await LoopbackServer.start(routes: [
            "/slow": ServedResponse.ok(Self.body, contentType: "image/png").delivered(.trickle(chunkSize: 1, interval: .seconds(1))),
        ])
        let response = try await RawClient.get("/slow", port: server.port, stopAfter: 1)
        #expect(response.body.count == 1)
        // The body would take minutes; the server notices the client gone at
        // its next byte and closes (waited for up to 5 s, not timed).
        #expect(await server.waitForOpenConnections())
        try await server.stop()
    }

    @Test func stoppingTheServerEndsAnEndlessBody() async throws {
        let server = try await LoopbackServer.start(routes: [
            "/endless": ServedResponse().delivered(.endlessChunks(chunkSize: 10, interval: .milliseconds(50))),
        ])
        let reading = Task { try await RawClient.get("/endless", port: server.port) }
        // Stop only once the request is in and chunks are flowing (a busy
        // machine may take a while to get there).
        let deadline = ContinuousClock.now + .seconds(10)
        while server.requestCount(for: "/endless") == 0 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        try await Task.sleep(for: .milliseconds(300))
        try await server.stop()
        let response = try await reading.value
        #expect(response.error == nil)   // an orderly close, not a timeout
        #expect(response.body.count >= 10)
        #expect(await server.waitForOpenConnections())
    }

    // MARK: statuses and headers

    @Test func tooManyRequestsAndServiceUnavailableSayWhenToRetry() async throws {
        let server = try await LoopbackServer.start(routes: [
            "/busy": .tooManyRequests(retryAfter: 7),
            "/down": .serviceUnavailable(retryAfter: 120),
        ])
        let busy = try await RawClient.get("/busy", port: server.port)
        #expect(busy.status == 429)
        #expect(busy.header("Retry-After") == "7")
        let down = try await RawClient.get("/down", port: server.port)
        #expect(down.status == 503)
        #expect(down.header("Retry-After") == "120")
        try await server.stop()
    }

    @Test func wrongContentTypeIsJustAHeader() async throws {
        let served = ServedResponse.ok(Self.body, contentType: "image/png").withContentType("text/html")
        #expect(served.headers.filter { $0.name == "Content-Type" }.map(\.value) == ["text/html"])
        #expect(ServedResponse.ok(Self.body, contentType: "image/png").withContentType(nil).header("Content-Type") == nil)
        let server = try await LoopbackServer.start(routes: ["/page": served])
        let response = try await RawClient.get("/page", port: server.port)
        #expect(response.header("Content-Type") == "text/html")
        #expect(response.body == Self.body)
        try await server.stop()
    }

    @Test func redirectChainsEndAtTheirDestinationAndLoopsComeBack() async throws {
        let server = try await LoopbackServer.start(routes: ["/cat.png": .ok(Self.body, contentType: "image/png")])
        server.route(ServedResponse.redirectChain(4, prefix: "/hop", to: "/cat.png"))
        server.route(ServedResponse.redirectLoop(3, prefix: "/loop"))
        var path = "/hop/1", hops = 0
        while hops < 10 {
            let response = try await RawClient.get(path, port: server.port)
            guard response.status == 302 else { break }
            path = try #require(response.header("Location"))
            hops += 1
        }
        #expect(hops == 4)
        #expect(path == "/cat.png")
        var loop: [String] = []
        path = "/loop/1"
        for _ in 0..<4 {
            path = try #require(try await RawClient.get(path, port: server.port).header("Location"))
            loop.append(path)
        }
        #expect(loop == ["/loop/2", "/loop/3", "/loop/1", "/loop/2"])
        try await server.stop()
    }

    // MARK: bombs

    @Test(arguments: [0, 1, 258, 259, 1_000, 100 << 20])
    func gzipBombInflatesToTheStatedNumberOfZeros(size: Int) async throws {
        let served = ServedResponse.gzipBomb(inflatedSize: size)
        #expect(served.header("Content-Encoding") == "gzip")
        let server = try await LoopbackServer.start(routes: ["/bomb": served])
        let response = try await RawClient.get("/bomb", port: server.port)
        try await server.stop()
        let gzip = response.body
        #expect(gzip == served.body)
        #expect(gzip.starts(with: [0x1F, 0x8B, 8]))
        let trailer = Array(gzip.suffix(8))
        #expect(UInt32(trailer[4]) | UInt32(trailer[5]) << 8 | UInt32(trailer[6]) << 16 | UInt32(trailer[7]) << 24 == UInt32(size))
        if size >= 100 << 20 { #expect(gzip.count < size / 900) }
        // zlib itself checks the deflate data, the CRC-32 and the size.
        let inflated = try #require(try Zlib.gunzip(gzip))
        #expect(inflated.count == size)
        #expect(inflated.allZero)
    }

    @Test func pngBombIsWellFormedAndDeclaresAHugeImage() throws {
        let served = ServedResponse.pngBomb()
        #expect(served.header("Content-Type") == "image/png")
        let png = Array(served.body)
        #expect(png.count < 2_000)
        #expect(png.prefix(8) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        var offset = 8
        var chunks: [(type: String, data: [UInt8])] = []
        while offset + 12 <= png.count {
            let length = Int(Self.bigEndian(png, at: offset))
            let typed = Array(png[offset + 4..<offset + 8 + length])
            #expect(Self.bigEndian(png, at: offset + 8 + length) == Self.crc32(typed), "CRC of chunk \(chunks.count)")
            chunks.append((String(decoding: typed.prefix(4), as: UTF8.self), Array(typed.dropFirst(4))))
            offset += 12 + length
        }
        #expect(offset == png.count)
        #expect(chunks.map(\.type) == ["IHDR", "IDAT", "IEND"])
        #expect(Self.bigEndian(chunks[0].data, at: 0) == 100_000)
        #expect(Self.bigEndian(chunks[0].data, at: 4) == 100_000)
        #expect(Array(chunks[0].data.suffix(5)) == [8, 6, 0, 0, 0])
        let row = try #require(try Zlib.uncompress(Data(chunks[1].data), capacity: 1 << 20))
        #expect(row.count == 1 + 4 * 100_000)
        #expect(row.allZero)
    }

    // MARK: ETag

    @Test func bytesChangeBehindOneETag() async throws {
        let server = try await LoopbackServer.start()
        server.route("/art.png", responder: ServedResponse.sameETagNewBytes(etag: "\"v1\"") { Data("image \($0)".utf8) })
        let first = try await RawClient.get("/art.png", port: server.port)
        let second = try await RawClient.get("/art.png", port: server.port)
        let revalidated = try await RawClient.get("/art.png", port: server.port, headers: ["If-None-Match: \"v1\""])
        let other = try await RawClient.get("/art.png", port: server.port, headers: ["If-None-Match: \"v0\""])
        #expect([first, second, revalidated, other].map(\.status) == [200, 200, 304, 200])
        #expect([first, second, revalidated, other].map { $0.header("ETag") } == Array(repeating: "\"v1\"", count: 4))
        #expect(first.body == Data("image 0".utf8))
        #expect(second.body == Data("image 1".utf8))
        #expect(revalidated.body.isEmpty)
        #expect(revalidated.header("Content-Length") == nil)
        #expect(other.body == Data("image 2".utf8))
        #expect(server.requestCount(for: "/art.png") == 4)
        try await server.stop()
    }

    // MARK: robustness

    @Test func requestsOnOneConnectionAreAnsweredInOrderAfterASlowOne() async throws {
        let server = try await LoopbackServer.start(routes: [
            "/slow": ServedResponse.text("slowly", status: 200).delivered(.trickle(chunkSize: 2, interval: .milliseconds(10))),
            "/fast": .text("fast", status: 200),
        ])
        let text = try await RawClient.exchange(
            "GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGET /fast HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            port: server.port
        )
        let body = String(decoding: text.bytes, as: UTF8.self)
        #expect(body.hasSuffix("\r\n\r\nfast"))
        #expect(body.contains("\r\n\r\nslowlyHTTP/1.1 200 OK"))
        try await server.stop()
    }

    @Test func clientsThatLeaveEarlyOrSendGarbageLeaveNothingOpen() async throws {
        let server = try await LoopbackServer.start(routes: [
            "/cat.png": ServedResponse.ok(Self.body, contentType: "image/png"),
            "/reset": ServedResponse.ok(Self.body, contentType: "image/png").delivered(.reset(afterBytes: 10)),
        ], recordsRequests: false)
        _ = try await RawClient.exchange("GET /cat.png HTTP/1.1\r\nHo", port: server.port, closeAfterSending: true)
        _ = try await RawClient.exchange("NONSENSE\r\n\r\n\u{0}\u{1}", port: server.port)
        _ = try await RawClient.get("/cat.png", port: server.port, stopAfter: 10)
        _ = try await RawClient.get("/reset", port: server.port)
        #expect(await server.waitForOpenConnections())
        #expect(server.acceptedConnections == 4)
        let response = try await RawClient.get("/cat.png", port: server.port)
        #expect(response.body == Self.body)
        #expect(server.requests.isEmpty)
        #expect(server.requestCount(for: "/cat.png") == 2)
        try await server.stop()
    }

    private static func bigEndian(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return ~crc
    }
}

extension Data {
    var allZero: Bool { allSatisfy { $0 == 0 } }
}

/// What a raw client read: the bytes, and the socket error that ended the read, if any.
struct RawResponse: Sendable {
    let bytes: Data
    /// `errno` of a failed read (`ECONNRESET` for a reset); `nil` for a clean end.
    let error: Int32?

    private var split: (head: [String], body: Data) {
        guard let end = bytes.firstRange(of: Data("\r\n\r\n".utf8)) else { return ([], Data()) }
        let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        return (head, Data(bytes[end.upperBound...]))
    }

    var status: Int? { split.head.first.flatMap { $0.split(separator: " ").dropFirst().first.flatMap { Int($0) } } }
    var body: Data { split.body }

    func header(_ name: String) -> String? {
        for line in split.head.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == name.lowercased() {
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }
}

/// A blocking BSD-socket client, run on its own thread: it sees the
/// connection exactly as the server left it (including resets).
enum RawClient {
    static func get(_ path: String, port: Int, headers: [String] = [], stopAfter limit: Int = .max) async throws -> RawResponse {
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers.map { $0 + "\r\n" }.joined() + "Connection: close\r\n\r\n"
        return try await exchange(request, port: port, stopAfter: limit)
    }

    /// Sends `request`, then reads until the server closes, an error, or `limit` bytes after the head.
    static func exchange(_ request: String, port: Int, stopAfter limit: Int = .max, closeAfterSending: Bool = false) async throws -> RawResponse {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try blockingExchange(request, port: port, limit: limit, closeAfterSending: closeAfterSending) })
            }
        }
    }

    private static func blockingExchange(_ request: String, port: Int, limit: Int, closeAfterSending: Bool) throws -> RawResponse {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        let bytes = Array(request.utf8)
        guard send(fd, bytes, bytes.count, 0) == bytes.count else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        if closeAfterSending { return RawResponse(bytes: Data(), error: nil) }
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var bodyStart: Int?
        while bodyStart.map({ received.count - $0 < limit }) ?? true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                return RawResponse(bytes: received, error: errno)
            }
            received.append(contentsOf: buffer[0..<count])
            if bodyStart == nil, let end = received.firstRange(of: Data("\r\n\r\n".utf8)) { bodyStart = end.upperBound }
        }
        return RawResponse(bytes: received, error: nil)
    }
}

/// zlib, loaded at run time (it is on every Linux and macOS system), to
/// check the hand-made gzip and zlib streams with the reference inflater.
enum Zlib {
    private typealias GzOpen = @convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>) -> OpaquePointer?
    private typealias GzRead = @convention(c) (OpaquePointer, UnsafeMutableRawPointer, UInt32) -> Int32
    private typealias GzClose = @convention(c) (OpaquePointer) -> Int32
    private typealias Uncompress = @convention(c) (UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<UInt>, UnsafePointer<UInt8>, UInt) -> Int32

    private static func symbol<T>(_ name: String, as type: T.Type) throws -> T {
        // dlopen counts references: opening again returns the same handle.
        guard let library = dlopen("libz.so.1", RTLD_NOW) ?? dlopen("libz.dylib", RTLD_NOW), let pointer = dlsym(library, name) else { throw ZlibError(message: "zlib has no \(name)") }
        return unsafeBitCast(pointer, to: type)
    }

    /// Inflates a gzip file with zlib; throws if zlib rejects the data, the CRC or the size.
    static func gunzip(_ gzip: Data) throws -> Data? {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("bomb-\(UUID().uuidString).gz")
        try gzip.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let open = try symbol("gzopen", as: GzOpen.self)
        let read = try symbol("gzread", as: GzRead.self)
        let close = try symbol("gzclose", as: GzClose.self)
        guard let handle = open(file.path, "rb") else { return nil }
        var output = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(handle, $0.baseAddress!, UInt32($0.count)) }
            if count < 0 { _ = close(handle); throw ZlibError(message: "gzread failed") }
            if count == 0 { break }
            output.append(contentsOf: buffer[0..<Int(count)])
        }
        guard close(handle) == 0 else { throw ZlibError(message: "gzclose reported an error (CRC or size)") }
        return output
    }

    /// Inflates a zlib stream of at most `capacity` bytes.
    static func uncompress(_ data: Data, capacity: Int) throws -> Data? {
        let uncompress = try symbol("uncompress", as: Uncompress.self)
        var output = [UInt8](repeating: 1, count: capacity)
        var length = UInt(capacity)
        let input = Array(data)
        let status = uncompress(&output, &length, input, UInt(input.count))
        guard status == 0 else { throw ZlibError(message: "uncompress returned \(status)") }
        return Data(output[0..<Int(length)])
    }

    struct ZlibError: Error { let message: String }
}
