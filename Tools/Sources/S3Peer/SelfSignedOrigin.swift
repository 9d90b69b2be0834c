import ChildProcesses
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An `https` origin on loopback whose certificate is self-signed (made
/// with the `openssl` command), serving one body at every path: Python's
/// `http.server` wrapped in its `ssl` module, started tied to the test
/// process and killed when this object goes. For tests of certificate
/// checks against a real TLS peer.
public final class SelfSignedOrigin: @unchecked Sendable {
    // @unchecked: `process` is started once, in `init`, and only killed after.
    private let process = Process()
    private let folder: URL
    /// The port it listens on.
    public let port: Int

    /// `https://127.0.0.1:PORT/PATH`.
    public func url(_ path: String) -> URL { URL(string: "https://127.0.0.1:\(port)\(path)")! }

    /// Starts the origin serving `body` as `contentType`; returns once it listens.
    public init(body: Data, contentType: String) async throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("imago-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let key = folder.appendingPathComponent("key.pem").path
        let certificate = folder.appendingPathComponent("certificate.pem").path
        let bodyPath = folder.appendingPathComponent("body").path
        try body.write(to: URL(fileURLWithPath: bodyPath))
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        openssl.arguments = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                             "-keyout", key, "-out", certificate]
        openssl.standardOutput = FileHandle.nullDevice
        openssl.standardError = FileHandle.nullDevice
        try await openssl.runToExit()
        guard openssl.terminationStatus == 0 else { throw Failed(reason: "openssl could not make a certificate") }
        let script = """
        import http.server, ssl, sys
        body = open(sys.argv[3], 'rb').read()
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header('Content-Type', sys.argv[4])
                self.send_header('Content-Length', str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def log_message(self, *arguments):
                pass
        server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[1], sys.argv[2])
        server.socket = context.wrap_socket(server.socket, server_side=True)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, certificate, key, bodyPath, contentType]
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.startTiedToThisProcess()
        // The first line is the port; end of file means Python did not start.
        // Read off Swift's cooperative threads: the read blocks until Python writes.
        let reader = output.fileHandleForReading
        let firstOutput = await withCheckedContinuation { (read: CheckedContinuation<Data, Never>) in
            DispatchQueue.global().async { read.resume(returning: reader.availableData) }
        }
        let line = String(decoding: firstOutput, as: UTF8.self)
        guard let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            throw Failed(reason: "python3's https server did not start")
        }
        self.port = port
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: folder)
    }

    /// The origin could not be started.
    public struct Failed: Error, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
    }
}
