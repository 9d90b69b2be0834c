import AsyncHTTPClient
import ChildProcesses
import Foundation
import LoopbackServer
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// moto's S3-compatible server (from PyPI) on a free loopback port, for
/// tests of S3 sources and result stores against a real peer: started tied
/// to the test process, killed when this object goes.
public final class MotoServer: @unchecked Sendable {
    // @unchecked: `process` is started once, in `init`, and only killed after.
    public let process = Process()
    /// The port it listens on.
    public let port: Int
    /// `http://127.0.0.1:PORT`.
    public var endpoint: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Where `moto_server` is: `MOTO_SERVER`, else the virtual environment
    /// `scripts/install-python-tools` makes in the root package's `.build`.
    public static var executable: String {
        ProcessInfo.processInfo.environment["MOTO_SERVER"]
            ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../.build/python/bin/moto_server").standardized.path
    }

    /// Starts moto and returns once it answers.
    public init() async throws {
        let path = Self.executable
        guard FileManager.default.isExecutableFile(atPath: path) else { throw Missing(path: path) }
        // A free port: bind one, note it, let it go.
        let probe = try await LoopbackServer.start(routes: [:])
        port = probe.port
        try await probe.stop()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["-H", "127.0.0.1", "-p", String(port)]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.startTiedToThisProcess()
        for _ in 0..<300 {
            let ready = HTTPClientRequest(url: endpoint.appendingPathComponent("moto-api/").absoluteString)
            if let response = try? await HTTPClient.shared.execute(ready, timeout: .seconds(2)), response.status == .ok {
                _ = try? await response.body.collect(upTo: 1 << 20)
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        process.terminate()
        throw Missing(path: "\(path) did not start on port \(port)")
    }

    deinit {
        // SIGKILL: moto's server does not always stop on SIGTERM.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// An unsigned PUT of a bucket (`/BUCKET`) or an object (`/BUCKET/KEY`),
    /// as moto accepts by default; the status.
    public func put(_ path: String, _ body: Data = Data(), contentType: String? = nil) async throws -> Int {
        var request = HTTPClientRequest(url: endpoint.absoluteString + path)
        request.method = .PUT
        request.body = .bytes(ByteBuffer(bytes: body))
        if let contentType { request.headers.replaceOrAdd(name: "Content-Type", value: contentType) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 20)
        return Int(response.status.code)
    }

    /// moto is not installed, or did not start.
    public struct Missing: Error, CustomStringConvertible {
        public let path: String
        public var description: String { "moto_server is missing or did not start (\(path)); scripts/test installs it with scripts/install-python-tools" }
    }
}
