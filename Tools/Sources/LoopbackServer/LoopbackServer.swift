import Foundation
import SharedState
import NIOCore
import NIOHTTP1
import NIOPosix
import Imago

/// A real HTTP/1.1 server on `127.0.0.1`, on a free port, that answers each
/// path as scripted: for integration tests, benchmarks and the demo.
///
/// It writes responses byte by byte itself, so it can also misbehave on
/// purpose: trickle a body, cut it short, reset the connection, never end
/// (see ``ServedResponse/Delivery`` and the fault responses on
/// ``ServedResponse``).
///
/// ```swift
/// let server = try await LoopbackServer.start(routes: [
///     "/cat.png": .ok(pngData, contentType: "image/png"),
///     "/old": .redirect(to: "/cat.png"),
///     "/reset": ServedResponse.ok(pngData, contentType: "image/png").delivered(.resetBeforeHead),
/// ])
/// defer { Task { try await server.stop() } }
/// let url = server.url("/cat.png")
/// ```
///
/// A path with no route gets a 404 with a `text/plain` body.
public final class LoopbackServer: Sendable {
    /// Answers a request that no fixed route matched.
    public typealias Handler = @Sendable (RecordedRequest) -> ServedResponse?
    /// Answers every request for one path, such as a body that changes on each request.
    public typealias Responder = @Sendable (RecordedRequest) -> ServedResponse

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
    ///   - recordsRequests: Whether ``requests`` keeps every request; turn it
    ///     off for long runs (``requestCount(for:)`` counts either way).
    public static func start(
        routes: [String: ServedResponse] = [:],
        handler: Handler? = nil,
        recordsRequests: Bool = true
    ) async throws -> LoopbackServer {
        let state = ServerState(routes: routes, handler: handler, recordsRequests: recordsRequests)
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
        state.routes.withLock { $0[path] = .fixed(response) }
    }

    /// Sets or replaces the responses for several paths, such as a
    /// ``ServedResponse/redirectChain(_:prefix:to:status:)``.
    public func route(_ routes: [String: ServedResponse]) {
        state.routes.withLock { table in
            for (path, response) in routes { table[path] = .fixed(response) }
        }
    }

    /// Answers `path` with whatever `responder` returns for each request.
    public func route(_ path: String, responder: @escaping Responder) {
        state.routes.withLock { $0[path] = .dynamic(responder) }
    }

    /// Every request received so far, in order (empty when the server was
    /// started with `recordsRequests: false`).
    public var requests: [RecordedRequest] { state.requests.withLock { $0 } }

    /// The requests received for `path`.
    public func requests(for path: String) -> [RecordedRequest] { requests.filter { $0.path == path } }

    /// How many requests arrived for `path`, recorded or not.
    public func requestCount(for path: String) -> Int { state.counts.withLock { $0[path, default: 0] } }

    /// How many connections the server has accepted since it started.
    public var acceptedConnections: Int { state.connections.withLock { $0.accepted } }

    /// How many connections are open now: a leak shows as a count that
    /// stays up after the clients have gone.
    public var openConnections: Int { state.connections.withLock { $0.open } }

    /// Waits until at most `count` connections are open, polling every 10 ms;
    /// `false` if `timeout` passed first.
    public func waitForOpenConnections(atMost count: Int = 0, timeout: Duration = .seconds(5)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while openConnections > count {
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    /// Stops listening and closes the connections. One in the middle of a
    /// response finishes writing it first, except a body that trickles or
    /// never ends: that connection is closed at its next write.
    public func stop() async throws {
        state.isStopped.withLock { $0 = true }
        try await channel.close()
        for connection in state.channels.withLock({ Array($0.values) }) {
            connection.pipeline.fireUserInboundEventTriggered(ServerState.Stopping())
        }
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
    enum Route: Sendable {
        case fixed(ServedResponse)
        case dynamic(LoopbackServer.Responder)
    }

    let routes: SharedState.Locked<[String: Route]>
    let handler: LoopbackServer.Handler?
    let recordsRequests: Bool
    let requests = SharedState.Locked<[RecordedRequest]>([])
    let counts = SharedState.Locked<[String: Int]>([:])
    let connections = SharedState.Locked<(accepted: Int, open: Int)>((0, 0))
    let isStopped = SharedState.Locked(false)
    /// The open connections, by channel identity.
    let channels = SharedState.Locked<[ObjectIdentifier: any Channel]>([:])

    /// Tells a connection that the server is stopping.
    struct Stopping: Sendable {}

    init(routes: [String: ServedResponse], handler: LoopbackServer.Handler?, recordsRequests: Bool) {
        self.routes = SharedState.Locked(routes.mapValues { .fixed($0) })
        self.handler = handler
        self.recordsRequests = recordsRequests
    }

    var stopped: Bool { isStopped.withLock { $0 } }

    func respond(to request: RecordedRequest) -> ServedResponse {
        if recordsRequests { requests.withLock { $0.append(request) } }
        counts.withLock { $0[request.path, default: 0] += 1 }
        switch routes.withLock({ $0[request.path] }) {
        case .fixed(let response): return response
        case .dynamic(let responder): return responder(request)
        case nil: return handler?(request) ?? .text("no route for \(request.path)\n", status: 404)
        }
    }
}

/// Reads HTTP requests from one connection and writes the scripted responses as raw bytes.
///
/// One response is written at a time: a request that arrives while a slow
/// response is still going out waits for it.
final class HTTPConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = ByteBuffer

    private let state: ServerState
    private var head: HTTPRequestHead?
    private var body = Data()
    /// Requests waiting for the response being written.
    private var waiting: [(request: RecordedRequest, keepAlive: Bool)] = []
    private var isWriting = false
    /// The next step of a slow response, cancelled when the connection goes.
    private var scheduled: Scheduled<Void>?
    private var isClosed = false

    init(state: ServerState) {
        self.state = state
    }

    func channelActive(context: ChannelHandlerContext) {
        state.connections.withLock { $0.accepted += 1; $0.open += 1 }
        state.channels.withLock { $0[ObjectIdentifier(context.channel)] = context.channel }
        // A connection accepted while the server was stopping is not in the list `stop` went through.
        if state.stopped { context.close(promise: nil) }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !isClosed {
            isClosed = true
            state.connections.withLock { $0.open -= 1 }
            state.channels.withLock { $0[ObjectIdentifier(context.channel)] = nil }
        }
        scheduled?.cancel()
        scheduled = nil
        waiting.removeAll()
        context.fireChannelInactive()
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
            body = Data()
            waiting.append((request, head.isKeepAlive))
            writeNext(context: context)
        }
    }

    /// Answers the oldest waiting request unless a response is going out.
    private func writeNext(context: ChannelHandlerContext) {
        guard !isWriting, !isClosed, !waiting.isEmpty else { return }
        let (request, keepAlive) = waiting.removeFirst()
        isWriting = true
        write(state.respond(to: request), keepAlive: keepAlive, context: context)
    }

    /// Called when a response is fully written and the connection stays open.
    private func finished(context: ChannelHandlerContext) {
        isWriting = false
        if state.stopped {
            context.close(promise: nil)
        } else {
            writeNext(context: context)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ServerState.Stopping {
            if !isWriting { context.close(promise: nil) }
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    private func write(_ response: ServedResponse, keepAlive: Bool, context: ChannelHandlerContext) {
        if case .resetBeforeHead = response.delivery {
            reset(context: context)
            return
        }
        var headerText = "HTTP/1.1 \(response.status) \(HTTPResponseStatus(statusCode: response.status).reasonPhrase)\r\n"
        for (name, value) in response.headers {
            headerText += "\(name): \(value)\r\n"
        }
        switch response.delivery {
        case .chunked, .endlessChunks:
            headerText += "Transfer-Encoding: chunked\r\n"
        default:
            if response.header("Content-Length") == nil && response.status != 304 && response.status != 204 {
                headerText += "Content-Length: \(response.body.count)\r\n"
            }
        }
        let closes: Bool
        switch response.delivery {
        case .truncated, .reset, .resetBeforeHead: closes = true
        default: closes = !keepAlive
        }
        headerText += closes ? "Connection: close\r\n\r\n" : "Connection: keep-alive\r\n\r\n"

        var buffer = context.channel.allocator.buffer(string: headerText)
        switch response.delivery {
        case .whole:
            buffer.writeBytes(response.body)
            finish(context.writeAndFlush(wrapOutboundOut(buffer)), closes: closes, context: context)
        case .truncated(let count):
            buffer.writeBytes(response.body.prefix(max(0, count)))
            finish(context.writeAndFlush(wrapOutboundOut(buffer)), closes: true, context: context)
        case .chunked(let chunkSize):
            for chunk in Self.split(response.body, chunkSize: chunkSize) {
                Self.writeChunk(chunk, to: &buffer)
            }
            buffer.writeString("0\r\n\r\n")
            finish(context.writeAndFlush(wrapOutboundOut(buffer)), closes: closes, context: context)
        case .reset(let count):
            buffer.writeBytes(response.body.prefix(max(0, count)))
            // Give the bytes time to reach the client: a reset discards what is still unsent.
            context.writeAndFlush(wrapOutboundOut(buffer)).assumeIsolated().whenComplete { _ in
                self.schedule(in: .milliseconds(20), context: context) { self.reset(context: context) }
            }
        case .resetBeforeHead:
            break
        case .trickle(let chunkSize, let interval):
            context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
            let chunks = Self.split(response.body, chunkSize: chunkSize)
            func send(_ index: Int) {
                guard index < chunks.count else {
                    if closes { context.close(promise: nil) } else { finished(context: context) }
                    return
                }
                let buffer = context.channel.allocator.buffer(bytes: chunks[index])
                context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
                schedule(in: interval, context: context) { send(index + 1) }
            }
            schedule(in: interval, context: context) { send(0) }
        case .endlessChunks(let chunkSize, let interval):
            context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
            let size = max(1, chunkSize)
            let source = response.body.isEmpty ? Data(count: size) : response.body
            func send(_ offset: Int) {
                var next = offset
                // A client that stops reading gets nothing more until it reads again.
                if context.channel.isWritable {
                    var chunk = Data(capacity: size)
                    while chunk.count < size {
                        let start = source.startIndex + next % source.count
                        let end = min(source.endIndex, start + size - chunk.count)
                        chunk.append(source[start..<end])
                        next += end - start
                    }
                    var buffer = context.channel.allocator.buffer(capacity: size + 16)
                    Self.writeChunk(chunk, to: &buffer)
                    context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
                }
                schedule(in: interval, context: context) { send(next) }
            }
            send(0)
        }
    }

    /// Runs `step` on the connection's loop after `delay`, unless the
    /// connection closes first; once the server stops, closes instead.
    private func schedule(in delay: Duration, context: ChannelHandlerContext, _ step: @escaping () -> Void) {
        guard !isClosed else { return }
        let nanoseconds = delay.components.seconds * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000
        scheduled = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(max(0, nanoseconds))) {
            self.scheduled = nil
            guard !self.isClosed else { return }
            if self.state.stopped {
                context.close(promise: nil)
            } else {
                step()
            }
        }
    }

    /// Closes the connection with a TCP reset (`SO_LINGER` 0) instead of a FIN.
    private func reset(context: ChannelHandlerContext) {
        guard let provider = context.channel as? any SocketOptionProvider else {
            context.close(promise: nil)
            return
        }
        provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }

    private static func writeChunk(_ chunk: Data, to buffer: inout ByteBuffer) {
        buffer.writeString(String(chunk.count, radix: 16) + "\r\n")
        buffer.writeBytes(chunk)
        buffer.writeString("\r\n")
    }

    private static func split(_ data: Data, chunkSize: Int) -> [Data] {
        let size = max(1, chunkSize)
        return stride(from: 0, to: data.count, by: size).map { start in
            data.subdata(in: data.startIndex + start..<data.startIndex + min(start + size, data.count))
        }
    }

    private func finish(_ write: EventLoopFuture<Void>, closes: Bool, context: ChannelHandlerContext) {
        write.assumeIsolated().whenComplete { _ in
            if closes { context.close(promise: nil) } else { self.finished(context: context) }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
