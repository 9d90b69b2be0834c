import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Imago

/// A real HTTP/1.1 server on `127.0.0.1`, on a free port, that answers each
/// path as scripted: for integration tests, benchmarks and the demo.
///
/// It writes responses byte by byte itself, so it can also misbehave on
/// purpose (trickle a body, cut it short).
///
/// ```swift
/// let server = try await LoopbackServer.start(routes: [
///     "/cat.png": .ok(pngData, contentType: "image/png"),
///     "/old": .redirect(to: "/cat.png"),
/// ])
/// defer { Task { try await server.stop() } }
/// let url = server.url("/cat.png")
/// ```
///
/// A path with no route gets a 404 with a `text/plain` body.
public final class LoopbackServer: Sendable {
    /// Answers a request that no fixed route matched.
    public typealias Handler = @Sendable (RecordedRequest) -> ServedResponse?

    /// The port the server listens on.
    public let port: Int
    private let channel: any Channel
    private let state: ServerState

    private init(channel: any Channel, state: ServerState) throws {
        guard let port = channel.localAddress?.port else {
            throw ServerError(message: "the server socket has no port")
        }
        self.port = port
        self.channel = channel
        self.state = state
    }

    /// Starts a server on a free loopback port.
    ///
    /// - Parameters:
    ///   - routes: The response for each path (without query).
    ///   - handler: Consulted for paths with no route; `nil` from it means 404.
    public static func start(
        routes: [String: ServedResponse] = [:],
        handler: Handler? = nil
    ) async throws -> LoopbackServer {
        let state = ServerState(routes: routes, handler: handler)
        let channel = try await ServerBootstrap(group: NIOSingletons.posixEventLoopGroup)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let operations = channel.pipeline.syncOperations
                    try operations.addHandler(ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
                    try operations.addHandler(HTTPConnectionHandler(state: state))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return try LoopbackServer(channel: channel, state: state)
    }

    /// The base URL, `http://127.0.0.1:PORT`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// The URL of `path` on this server (`path` starts with `/`).
    public func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// Sets or replaces the response for `path` while the server runs.
    public func route(_ path: String, _ response: ServedResponse) {
        state.routes.withLock { $0[path] = response }
    }

    /// Every request received so far, in order.
    public var requests: [RecordedRequest] { state.requests.withLock { $0 } }

    /// The requests received for `path`.
    public func requests(for path: String) -> [RecordedRequest] { requests.filter { $0.path == path } }

    /// Stops listening. Connections already open finish what they are writing.
    public func stop() async throws {
        try await channel.close()
    }
}

/// An error starting the server.
public struct ServerError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public let message: String
    public var description: String { message }
}

/// State shared by the connections of one server.
final class ServerState: Sendable {
    let routes: Locked<[String: ServedResponse]>
    let handler: LoopbackServer.Handler?
    let requests = Locked<[RecordedRequest]>([])

    init(routes: [String: ServedResponse], handler: LoopbackServer.Handler?) {
        self.routes = Locked(routes)
        self.handler = handler
    }

    func respond(to request: RecordedRequest) -> ServedResponse {
        requests.withLock { $0.append(request) }
        if let response = routes.withLock({ $0[request.path] }) { return response }
        return handler?(request) ?? .text("no route for \(request.path)\n", status: 404)
    }
}

/// Reads HTTP requests from one connection and writes the scripted responses as raw bytes.
final class HTTPConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = ByteBuffer

    private let state: ServerState
    private var head: HTTPRequestHead?
    private var body = Data()
    private var isWriting = false

    init(state: ServerState) {
        self.state = state
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = Data()
        case .body(let buffer):
            body.append(contentsOf: buffer.readableBytesView)
        case .end:
            guard let head else { return }
            self.head = nil
            let components = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
            let request = RecordedRequest(
                method: head.method.rawValue,
                path: String(components[0]),
                query: components.count > 1 ? String(components[1]) : nil,
                headers: head.headers.map { (name: $0.name, value: $0.value) },
                body: body
            )
            write(state.respond(to: request), keepAlive: head.isKeepAlive, context: context)
        }
    }

    private func write(_ response: ServedResponse, keepAlive: Bool, context: ChannelHandlerContext) {
        var headerText = "HTTP/1.1 \(response.status) \(HTTPResponseStatus(statusCode: response.status).reasonPhrase)\r\n"
        for (name, value) in response.headers {
            headerText += "\(name): \(value)\r\n"
        }
        if case .chunked = response.delivery {
            headerText += "Transfer-Encoding: chunked\r\n"
        } else if response.header("Content-Length") == nil {
            headerText += "Content-Length: \(response.body.count)\r\n"
        }
        let closes: Bool
        if case .truncated = response.delivery { closes = true } else { closes = !keepAlive }
        headerText += closes ? "Connection: close\r\n\r\n" : "Connection: keep-alive\r\n\r\n"

        let headBuffer = context.channel.allocator.buffer(string: headerText)
        let loop = context.eventLoop.assumeIsolated()
        switch response.delivery {
        case .whole:
            var buffer = headBuffer
            buffer.writeBytes(response.body)
            finish(context.writeAndFlush(wrapOutboundOut(buffer)), closes: closes, context: context)
        case .truncated(let count):
            var buffer = headBuffer
            buffer.writeBytes(response.body.prefix(max(0, count)))
            finish(context.writeAndFlush(wrapOutboundOut(buffer)), closes: true, context: context)
        case .chunked(let chunkSize):
            var buffer = headBuffer
            for chunk in Self.split(response.body, chunkSize: chunkSize) {
                buffer.writeString(String(chunk.count, radix: 16) + "\r\n")
                buffer.writeBytes(chunk)
                buffer.writeString("\r\n")
            }
            buffer.writeString("0\r\n\r\n")
            finish(context.writeAndFlush(wrapOutboundOut(buffer)), closes: closes, context: context)
        case .trickle(let chunkSize, let interval):
            context.writeAndFlush(wrapOutboundOut(headBuffer), promise: nil)
            let chunks = Self.split(response.body, chunkSize: chunkSize)
            let nanoseconds = interval.components.seconds * 1_000_000_000 + interval.components.attoseconds / 1_000_000_000
            func send(_ index: Int) {
                guard context.channel.isActive else { return }
                guard index < chunks.count else {
                    if closes { context.close(promise: nil) }
                    return
                }
                let buffer = context.channel.allocator.buffer(bytes: chunks[index])
                context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
                loop.scheduleTask(in: .nanoseconds(nanoseconds)) { send(index + 1) }
            }
            loop.scheduleTask(in: .nanoseconds(nanoseconds)) { send(0) }
        }
    }

    private static func split(_ data: Data, chunkSize: Int) -> [Data] {
        let size = max(1, chunkSize)
        return stride(from: 0, to: data.count, by: size).map { start in
            data.subdata(in: data.startIndex + start..<data.startIndex + min(start + size, data.count))
        }
    }

    private func finish(_ write: EventLoopFuture<Void>, closes: Bool, context: ChannelHandlerContext) {
        guard closes else { return }
        write.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
