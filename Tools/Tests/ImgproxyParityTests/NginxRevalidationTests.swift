import ChildProcesses
import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import LoopbackServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ServeProcess
import Testing

/// A real nginx cache (`proxy_cache` with `proxy_cache_revalidate on`) in
/// front of `imago serve`: once its copy is stale it revalidates with
/// `If-None-Match` and `If-Modified-Since`, `imago serve` passes them to the
/// source, and the source's 304 comes back as a 304 that nginx counts as
/// `REVALIDATED`, with no second download or render.
@Suite(.serialized) struct NginxRevalidationTests {
    static let image = try! ImageEncoders.png().encode(TestImages.gradient(width: 40, height: 30))
    static let lastModified = "Wed, 21 Oct 2015 07:28:00 GMT"

    /// An origin path that answers 304 to a request that holds its validators, as a real origin does.
    static func validatingRoute(etag: String?) -> LoopbackServer.Responder {
        { request in
            var headers: [(name: String, value: String)] = [("Content-Type", "image/png"), ("Last-Modified", lastModified)]
            if let etag { headers.append(("ETag", etag)) }
            let matches = if let given = request.header("If-None-Match") { given == etag } else { request.header("If-Modified-Since") == lastModified }
            return matches ? ServedResponse(status: 304, headers: headers) : ServedResponse(status: 200, headers: headers, body: image)
        }
    }

    @Test(arguments: [("/tagged.png", "\"v1\"" as String?), ("/dated.png", nil)])
    func aStaleCopyIsRevalidatedWithoutARender(path: String, etag: String?) async throws {
        let origin = try await LoopbackServer.start()
        origin.route(path, responder: Self.validatingRoute(etag: etag))
        // A one-second time to live: nginx's copy is stale a second later.
        let arguments = ["--unsigned", "--allow-private-networks", "--ttl", "1"]
        var server = try await ServeProcess(arguments)
        let nginx = try await Nginx(upstreamPort: server.port)
        let url = URL(string: "http://127.0.0.1:\(nginx.port)/insecure/rs:fit:20:20/plain/" + origin.url(path).absoluteString)!
        func get() async throws -> (status: Int, cache: String, type: String) {
            var request = URLRequest(url: url, timeoutInterval: 30)
            request.cachePolicy = .reloadIgnoringLocalCacheData
            let (_, response) = try await URLSession(configuration: .ephemeral).data(for: request)
            let http = response as! HTTPURLResponse
            return (http.statusCode, http.value(forHTTPHeaderField: "X-Cache-Status") ?? "", http.value(forHTTPHeaderField: "Content-Type") ?? "")
        }
        do {
            let first = try await get()
            #expect(first.status == 200 && first.cache == "MISS" && first.type == "image/png", "\(first)")
            // Revalidated by a replica that kept nothing (a restart, or another host behind
            // the same nginx): only the source can say the image is unchanged.
            let port = server.port
            _ = await server.stop()
            server = try await ServeProcess(arguments + ["--port", "\(port)"])
            try await Task.sleep(for: .milliseconds(2100))
            let second = try await get()
            #expect(second.status == 200 && second.cache == "REVALIDATED", "\(second); nginx log: \(nginx.log)")
            // The source was asked once for the image and once whether it changed, with
            // the validator nginx held; nothing was downloaded or rendered the second time.
            let requests = origin.requests(for: path)
            #expect(requests.count == 2)
            #expect(requests.last?.header(etag == nil ? "If-Modified-Since" : "If-None-Match") == (etag ?? Self.lastModified))
        } catch {
            Issue.record("\(error)")
        }
        await nginx.stop()
        _ = await server.stop()
        try await origin.stop()
    }
}

/// nginx as a caching proxy on a free loopback port, its files in a temporary folder.
final class Nginx: @unchecked Sendable {
    let process = Process()
    let folder: URL
    let port: Int

    init(upstreamPort: Int) async throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("imago-nginx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("cache"), withIntermediateDirectories: true)
        port = try Self.freePort()
        let root = folder.path
        let configuration = """
        daemon off;
        master_process off;
        worker_processes 1;
        pid \(root)/nginx.pid;
        error_log \(root)/error.log info;
        events { worker_connections 64; }
        http {
            access_log off;
            client_body_temp_path \(root)/body;
            proxy_temp_path \(root)/proxy;
            fastcgi_temp_path \(root)/fastcgi;
            uwsgi_temp_path \(root)/uwsgi;
            scgi_temp_path \(root)/scgi;
            proxy_cache_path \(root)/cache keys_zone=images:1m;
            server {
                listen 127.0.0.1:\(port);
                location / {
                    proxy_pass http://127.0.0.1:\(upstreamPort);
                    proxy_cache images;
                    proxy_cache_revalidate on;
                    add_header X-Cache-Status $upstream_cache_status always;
                }
            }
        }
        """
        try configuration.write(to: folder.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/nginx")
        process.arguments = ["-p", root, "-c", folder.appendingPathComponent("nginx.conf").path, "-e", "\(root)/error.log"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.startTiedToThisProcess()
        // Listening once a connection is accepted.
        for _ in 0..<500 {
            if Self.accepts(port) { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        process.terminate()
        throw NginxDidNotStart(log: log)
    }

    var log: String { (try? String(contentsOf: folder.appendingPathComponent("error.log"), encoding: .utf8)) ?? "" }

    /// Kills it (SIGKILL: a child started from the test runner may inherit a
    /// signal mask that holds SIGTERM back) and removes its files.
    func stop() async {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        await process.exited()
        try? FileManager.default.removeItem(at: folder)
    }

    deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

    struct NginxDidNotStart: Error, CustomStringConvertible {
        let log: String
        var description: String { "nginx did not start: \(log)" }
    }

    /// A port no one listens on now.
    static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(socket, pointer, length) == 0 && getsockname(socket, pointer, &length) == 0
            }
        }
        guard bound else { throw NginxDidNotStart(log: "no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether something accepts a connection on `port`.
    static func accepts(_ port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
