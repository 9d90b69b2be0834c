import ChildProcesses
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `imago serve`'s listener attacked as a hostile client would: heads sent
/// slowly or never, kept-alive connections held idle, floods of idle
/// connections. Each attack is bounded by the listener's limits, and
/// `/health` answers throughout.
@Suite struct HostileClientTests {
    /// A raw TCP connection to the server, for what an HTTP client will not send.
    final class RawConnection: @unchecked Sendable {
        // @unchecked: used by one thread at a time (the test's own).
        let descriptor: Int32

        init(port: Int) throws {
            descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else {
                close(descriptor)
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
        }

        deinit { close(descriptor) }

        /// Sends `text`; false when the server has closed the connection.
        @discardableResult
        func send(_ text: String) -> Bool {
            let bytes = Array(text.utf8)
            return bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
        }

        /// What arrives within `seconds`: the bytes, and whether the server closed the connection.
        func receive(within seconds: Double) -> (data: Data, closed: Bool) {
            var received = Data()
            let end = Date().addingTimeInterval(seconds)
            while Date() < end {
                var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                let ready = poll(&poller, 1, Int32(max(1, end.timeIntervalSinceNow * 1000)))
                guard ready > 0 else { continue }
                var buffer = [UInt8](repeating: 0, count: 65_536)
                let count = recv(descriptor, &buffer, buffer.count, 0)
                if count <= 0 { return (received, true) }
                received.append(contentsOf: buffer.prefix(count))
                if let text = String(data: received, encoding: .utf8), text.contains("\r\n\r\n"), text.hasSuffix("ok") { return (received, false) }
            }
            return (received, false)
        }

        /// Waits up to `seconds` for the server to close the connection.
        func closedByServer(within seconds: Double) -> Bool {
            let end = Date().addingTimeInterval(seconds)
            while Date() < end {
                if receive(within: end.timeIntervalSinceNow).closed { return true }
            }
            return false
        }
    }

    /// `GET /health` over a connection of its own: the status line, or `nil`.
    static func health(port: Int) -> String? {
        guard let connection = try? RawConnection(port: port) else { return nil }
        connection.send("GET /health HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
        let answer = connection.receive(within: 5).data
        return String(decoding: answer, as: UTF8.self).split(separator: "\r\n").first.map(String.init)
    }

    @Test func headsThatArriveSlowlyOrNeverAreCutAtTheReadTimeout() async throws {
        let server = try await ServeTests.Running(["--unsigned", "--read-request-timeout", "1"])
        let port = server.port
        let (closed, elapsed) = try await offTheTestThreads { () throws -> ([Int], Double) in
            let silent = try (0..<5).map { _ in try RawConnection(port: port) }
            let partial = try (0..<5).map { _ in try RawConnection(port: port) }
            for connection in partial { connection.send("GET /heal") }
            let dribbling = try (0..<5).map { _ in try RawConnection(port: port) }
            for connection in dribbling { connection.send("GET /health HTTP/1.1\r\n") }
            // A header line every 300 ms: each keeps the head coming, none completes it.
            let started = Date()
            var closed = Set<Int>()
            let all = silent + partial + dribbling
            while Date().timeIntervalSince(started) < 10, closed.count < all.count {
                for (index, connection) in all.enumerated() where !closed.contains(index) {
                    if index >= 10 { connection.send("X-Slow-\(Int(Date().timeIntervalSince(started) * 10)): 1\r\n") }
                    if connection.receive(within: 0.02).closed { closed.insert(index) }
                }
                Thread.sleep(forTimeInterval: 0.3)
            }
            return (closed.sorted(), Date().timeIntervalSince(started))
        }
        #expect(closed.count == 15, "every slow head was cut: \(closed)")
        #expect(elapsed < 8, "within the read timeout and a margin: \(elapsed) s")
        #expect(Self.health(port: server.port) == "HTTP/1.1 200 OK")
        #expect(await server.stop() == 0)
    }

    @Test func anIdleKeptAliveConnectionIsClosedAfterTheKeepAliveTimeout() async throws {
        let server = try await ServeTests.Running(["--unsigned", "--keep-alive-timeout", "1"])
        let port = server.port
        let (answer, keptAlive, closedLater) = try await offTheTestThreads { () throws -> (String, Bool, Bool) in
            let connection = try RawConnection(port: port)
            connection.send("GET /health HTTP/1.1\r\nHost: test\r\n\r\n")
            let first = connection.receive(within: 5)
            return (String(decoding: first.data, as: UTF8.self), !first.closed, connection.closedByServer(within: 6))
        }
        #expect(answer.hasPrefix("HTTP/1.1 200"))
        #expect(keptAlive, "kept alive after the answer")
        #expect(closedLater, "closed once idle for the keep-alive timeout")
        #expect(await server.stop() == 0)
        // With 0, one request per connection.
        let once = try await ServeTests.Running(["--unsigned", "--keep-alive-timeout", "0"])
        let oncePort = once.port
        let closedAtOnce = try await offTheTestThreads { () throws -> Bool in
            let single = try RawConnection(port: oncePort)
            single.send("GET /health HTTP/1.1\r\nHost: test\r\n\r\n")
            return single.closedByServer(within: 5)
        }
        #expect(closedAtOnce)
        #expect(await once.stop() == 0)
    }

    /// More idle connections than the server admits: the oldest idle ones
    /// are shed, so new clients, `/health` among them, still get answers.
    @Test func aFloodOfIdleConnectionsNeitherExhaustsTheServerNorBlocksHealth() async throws {
        let server = try await ServeTests.Running(["--unsigned", "--max-clients", "40", "--read-request-timeout", "30"])
        let port = server.port
        let (healths, shed, last) = try await Self.flood(port: port, connections: 300, healthEvery: 50)
        #expect(healths == Array(repeating: "HTTP/1.1 200 OK", count: 6), "/health after every 50 idle connections")
        #expect(shed >= 300 - 40, "\(shed) of 300 idle connections were closed")
        #expect(last == "HTTP/1.1 200 OK")
        #expect(await server.stop() == 0)
    }

    /// The descriptor limit: raised at start as far as the hard limit allows
    /// (room for every client and 256 descriptors more); where it cannot be,
    /// the clients are capped to fit, with a warning, so that a flood is shed
    /// before the descriptors run out and `/health` answers throughout.
    @Test func theDescriptorLimitIsRaisedOrTheClientsAreCappedToFitIt() async throws {
        let roomy = try await ServeTests.Running(["--unsigned", "--max-clients", "1000"], descriptorLimit: (soft: 256, hard: 4096))
        #expect(try Self.descriptorLimits(of: roomy.process.processIdentifier) == [1256, 4096], "the soft limit raised to fit")
        #expect(!roomy.log.contains("descriptor limit"))
        #expect(await roomy.stop() == 0)
        // 300 descriptors and the default 2,048 clients: 44 clients, and 400 idle connections are shed.
        let tight = try await ServeTests.Running(["--unsigned", "--read-request-timeout", "30"], descriptorLimit: (soft: 300, hard: 300))
        #expect(tight.log.contains("the descriptor limit is 300: at most 44 clients, not 2048"), "\(tight.log)")
        let port = tight.port
        let (healths, closed, last) = try await Self.flood(port: port, connections: 400, healthEvery: 100)
        let opened = 400 - closed
        #expect(healths == Array(repeating: "HTTP/1.1 200 OK", count: 4), "/health after every 100 idle connections")
        #expect(opened <= 44, "\(opened) of 400 idle connections still open")
        #expect(last == "HTTP/1.1 200 OK")
        #expect(await tight.stop() == 0)
    }

    /// Opens `connections` idle connections to `port`, asking `/health`
    /// after every `healthEvery` of them; half a second later, how many the
    /// server has closed (shed), and `/health` once more.
    static func flood(port: Int, connections: Int, healthEvery: Int) async throws -> (healths: [String?], closed: Int, last: String?) {
        try await offTheTestThreads { () throws -> ([String?], Int, String?) in
            var flood: [RawConnection] = []
            var healths: [String?] = []
            for index in 0..<connections {
                flood.append(try RawConnection(port: port))
                if index % healthEvery == healthEvery - 1 { healths.append(Self.health(port: port)) }
            }
            Thread.sleep(forTimeInterval: 0.5)
            return (healths, flood.filter { $0.receive(within: 0.01).closed }.count, Self.health(port: port))
        }
    }

    /// A process's soft and hard `RLIMIT_NOFILE`, from `/proc/PID/limits`.
    static func descriptorLimits(of pid: Int32) throws -> [Int] {
        let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
        let line = limits.split(separator: "\n").first { $0.hasPrefix("Max open files") } ?? ""
        return line.dropFirst("Max open files".count).split(separator: " ").prefix(2).compactMap { Int($0) }
    }

    /// `imago ARGUMENTS` to its exit: the status and both outputs.
    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = CLITests.binary
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let (out, err) = (Pipe(), Pipe())
        process.standardOutput = out
        process.standardError = err
        try process.startTiedToThisProcess()
        // Read both to their ends before waiting, so that neither pipe fills (on a thread of its own).
        let (stdout, stderr) = try await offTheTestThreads {
            (out.fileHandleForReading.readDataToEndOfFile(), err.fileHandleForReading.readDataToEndOfFile())
        }
        await process.exited()
        return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
    }

    @Test func theListenerFlagsAreCheckedAndReadFromImgproxysVariables() async throws {
        for (flag, value) in [("--timeout", "0"), ("--read-request-timeout", "-1"), ("--keep-alive-timeout", "nan"),
                              ("--max-clients", "0"), ("--signature-size", "33"), ("--signature-size", "0")] {
            let result = try await Self.run(["serve", "--unsigned", flag, value])
            #expect(result.status == 2, "\(flag) \(value): \(result.stderr)")
        }
        let printed = try await Self.run(["serve", "--unsigned", "--print-config"], environment: [
            "IMGPROXY_TIMEOUT": "7", "IMGPROXY_READ_REQUEST_TIMEOUT": "3", "IMGPROXY_KEEP_ALIVE_TIMEOUT": "4",
            "IMGPROXY_MAX_CLIENTS": "99", "IMGPROXY_SIGNATURE_SIZE": "8",
        ])
        for line in ["timeout = 7.0", "read-request-timeout = 3.0", "keep-alive-timeout = 4.0", "max-clients = 99", "signature-size = 8"] {
            #expect(printed.stdout.contains(line), "\(line) in \(printed.stdout)")
        }
    }
}
