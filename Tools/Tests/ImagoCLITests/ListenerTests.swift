import ChildProcesses
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Where and how `imago serve` listens, as imgproxy's `IMGPROXY_BIND`,
/// `IMGPROXY_NETWORK` and `IMGPROXY_WRITE_RESPONSE_TIMEOUT` set it.
@Suite struct ListenerTests {
    /// `GET /health` over the Unix socket at `path`: the whole answer, or "" when it cannot connect.
    static func health(socket path: String) -> String {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { return "" }
        let request = Array("GET /health HTTP/1.0\r\nHost: test\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var received = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while poll(&poller, 1, 5000) > 0 {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            received += buffer.prefix(count)
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// imgproxy's environment with `IMGPROXY_NETWORK=unix`: the socket
    /// answers; a second start over the socket a killed server left works;
    /// a path that is a regular file is not replaced and the start fails.
    @Test func aUnixSocketIsListenedOnAndAStaleOneReplaced() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imago-socket-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("imago.sock").path
        let environment = ["IMGPROXY_NETWORK": "unix", "IMGPROXY_BIND": path]
        let first = try await ServeTests.Running(["--unsigned"], environment: environment)
        #expect(first.socketPath == path)
        let answer = try await offTheTestThreads { Self.health(socket: path) }
        #expect(answer.hasPrefix("HTTP/1.1 200") && answer.hasSuffix("ok"), "\(answer)")
        kill(first.process.processIdentifier, SIGKILL)
        await first.process.exited()
        #expect(FileManager.default.fileExists(atPath: path), "a killed server leaves its socket")
        let second = try await ServeTests.Running(["--unsigned"], environment: environment)
        #expect(try await offTheTestThreads { Self.health(socket: path) }.hasPrefix("HTTP/1.1 200"))
        #expect(await second.stop() == 0)

        let file = folder.appendingPathComponent("not-a-socket").path
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: file))
        let refused = try await HostileClientTests.run(["serve", "--unsigned", "--network", "unix", "--bind", file])
        #expect(refused.status != 0)
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "keep me")
    }

    /// imgproxy's `IMGPROXY_SO_REUSEPORT`: a second server binds the port
    /// the first listens on, and when the first stops the second answers
    /// every request; without the option a second start fails.
    /// Connects to `port` on loopback, sends nothing, and returns how many
    /// seconds pass until the server closes the connection (or 10 s).
    static func secondsUntilASilentConnectionIsClosed(port: Int) -> Double {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return 0 }
        let started = Date()
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        var byte: UInt8 = 0
        while poll(&poller, 1, 10_000) > 0, recv(descriptor, &byte, 1, 0) > 0 {}
        return Date().timeIntervalSince(started)
    }

    @Test func twoServersShareAPortWithSOReusePort() async throws {
        let first = try await ServeTests.Running(["--unsigned", "--read-request-timeout", "1"], environment: ["IMGPROXY_SO_REUSEPORT": "true"])
        let port = first.port
        let second = try await ServeTests.Running(["--unsigned", "--so-reuseport", "--read-request-timeout", "1", "--port", String(port)])
        #expect(second.port == port)
        let refused = try await HostileClientTests.run(["serve", "--unsigned", "--no-cache", "--port", String(port)])
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains("Address already in use"), "\(refused.stderr)")
        for _ in 0..<20 { #expect(try await first.get("/health").status == 200) }
        // The connection guard holds on this listener too: a client that sends nothing is closed at the read timeout.
        let silent = try await offTheTestThreads { Self.secondsUntilASilentConnectionIsClosed(port: port) }
        #expect(silent > 0 && silent < 9, "closed after \(silent) s")
        // Where each put the application's own socket (a private folder), gone once it stops.
        let line = first.log.split(separator: "\n").first { $0.contains("listening on socket path") }
        let folder = line.flatMap { line in line.range(of: "/").map { URL(fileURLWithPath: String(line[$0.lowerBound...])).deletingLastPathComponent() } }
        #expect(folder.map { FileManager.default.fileExists(atPath: $0.path) } == true, "\(first.log)")
        #expect(await first.stop() == 0)
        #expect(folder.map { FileManager.default.fileExists(atPath: $0.path) } == false)
        for _ in 0..<20 { #expect(try await second.get("/health").status == 200) }
        #expect(await second.stop() == 0)
        // Not for a Unix socket.
        let unix = try await HostileClientTests.run(["serve", "--unsigned", "--so-reuseport", "--network", "unix", "--bind", "/tmp/x.sock", "--print-config"])
        #expect(unix.status == 2)
    }

    @Test func badBindsAndNetworksStopTheStart() async throws {
        for environment in [["IMGPROXY_BIND": "-1.-1.-1.-1"], ["IMGPROXY_BIND": "example.com"], ["IMGPROXY_BIND": "1.2.3.4:http"],
                            ["IMGPROXY_NETWORK": "udp"], ["IMGPROXY_NETWORK": "unix"]] {
            let result = try await HostileClientTests.run(["serve", "--unsigned", "--print-config"], environment: environment)
            #expect(result.status == 2, "\(environment): \(result.stderr)")
        }
        let printed = try await HostileClientTests.run(["serve", "--unsigned", "--print-config"], environment: [
            "IMGPROXY_BIND": ":9123", "IMGPROXY_NETWORK": "tcp6", "IMGPROXY_WRITE_RESPONSE_TIMEOUT": "3",
            "IMGPROXY_GRACEFUL_STOP_TIMEOUT": "4", "IMGPROXY_ENABLE_DEBUG_HEADERS": "true", "IMGPROXY_SET_CANONICAL_HEADER": "1",
        ])
        for line in ["host = ::", "port = 9123", "write-response-timeout = 3.0", "drain-timeout = 4.0", "debug-headers = true",
                     "canonical-header = true"] {
            #expect(printed.stdout.contains(line), "\(line) in \(printed.stdout)")
        }
    }

    /// A client that stops reading a large answer is cut off at the write
    /// timeout; `/health` answers meanwhile.
    @Test func aClientThatStopsReadingIsCutAtTheWriteTimeout() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imago-write-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let size = 64 << 20
        try Data(count: size).write(to: folder.appendingPathComponent("big.bin"))
        let server = try await ServeTests.Running(["--unsigned", "--local-root", folder.path, "--write-response-timeout", "1",
                                                   "--max-src-file-size", "\(size * 2)"])
        let port = server.port
        let (received, closed) = try await offTheTestThreads { () throws -> (Int, Bool) in
            let connection = try HostileClientTests.RawConnection(port: port)
            connection.send("GET /insecure/raw:1/plain/local:%2F%2F%2Fbig.bin HTTP/1.1\r\nHost: test\r\n\r\n")
            // Read nothing for three write timeouts, then drain what the server sent before it gave up.
            Thread.sleep(forTimeInterval: 3)
            var total = 0
            let end = Date().addingTimeInterval(20)
            while Date() < end {
                let part = connection.receive(within: 1)
                total += part.data.count
                if part.closed { return (total, true) }
            }
            return (total, false)
        }
        #expect(closed, "the server closed the connection")
        #expect(received < size, "the answer was cut: \(received) of \(size) bytes")
        #expect(HostileClientTests.health(port: port) == "HTTP/1.1 200 OK")
        #expect(await server.stop() == 0)
    }
}
