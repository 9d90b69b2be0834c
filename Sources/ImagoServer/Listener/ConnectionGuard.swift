#if Server && canImport(HummingbirdCore) && canImport(NIOHTTPTypes)
import Dispatch
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Imago
import NIOCore
import NIOHTTPTypes

/// Keeps an HTTP listener answering whatever its clients do: a client
/// that sends its request head slowly (slowloris), one that holds a
/// kept-alive connection open and says nothing, and a crowd that opens
/// connections and sends nothing cannot exhaust the server.
///
/// - A request head must arrive whole within ``Limits/readRequestTimeout``
///   of the connection opening (imgproxy's `IMGPROXY_READ_REQUEST_TIMEOUT`).
/// - After a response, the next request's head must arrive within
///   ``Limits/keepAliveTimeout`` (imgproxy's `IMGPROXY_KEEP_ALIVE_TIMEOUT`).
/// - At most ``Limits/maximumConnections`` are open (imgproxy's
///   `IMGPROXY_MAX_CLIENTS`). A connection beyond it is made room for by
///   closing the connection that has waited longest without a request in
///   progress (idle, or still sending its head), so `/health` and real
///   clients get in while a flood of idle connections is shed; only when
///   every connection is busy with a request is the new one closed.
///
/// A request being answered is never cut by these limits: the render has
/// its own deadline (``ImageServerConfiguration/timeout``).
///
/// ```swift
/// let guard = ConnectionGuard(limits: .init(readRequestTimeout: 10, keepAliveTimeout: 10, maximumConnections: 2048))
/// let app = Application(router: router, server: .http1(configuration: guard.http1Configuration()))
/// ```
public final class ConnectionGuard: Sendable {
    /// The limits; imgproxy's defaults unless set.
    public struct Limits: Sendable, Hashable {
        /// Seconds from a connection's opening to its first request head. Default: 10.
        public var readRequestTimeout: Double
        /// Seconds a connection may wait for its next request after a
        /// response; 0 closes it after each response. Default: 10.
        public var keepAliveTimeout: Double
        /// The most connections open at once. Default: 2048.
        public var maximumConnections: Int
        /// Seconds from a response's head to its last byte on the wire: a
        /// client that reads slower than that is cut off (imgproxy's
        /// `IMGPROXY_WRITE_RESPONSE_TIMEOUT`). Default: 10.
        public var writeResponseTimeout: Double

        /// Creates limits; the defaults are imgproxy's.
        public init(readRequestTimeout: Double = 10, keepAliveTimeout: Double = 10, maximumConnections: Int = 2048,
                    writeResponseTimeout: Double = 10) {
            self.readRequestTimeout = readRequestTimeout
            self.keepAliveTimeout = keepAliveTimeout
            self.maximumConnections = maximumConnections
            self.writeResponseTimeout = writeResponseTimeout
        }
    }

    /// What the guard knows of one open connection.
    private struct Entry {
        let channel: any Channel
        /// Requests whose head arrived and whose response has not ended.
        var requestsInProgress: Int
        /// When it last became idle (opened, or finished a response).
        var idleSince: UInt64
    }

    private struct State {
        var connections: [ObjectIdentifier: Entry] = [:]
        var shed = 0
        var timedOut = 0
    }

    /// The limits the guard enforces.
    public let limits: Limits
    private let state = Locked(State())

    /// Creates a guard.
    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// How many connections are open.
    public var openConnections: Int { state.withLock { $0.connections.count } }
    /// How many connections were closed to make room for new ones.
    public var shedConnections: Int { state.withLock { $0.shed } }
    /// How many connections were closed for a head or a next request that did not come in time.
    public var timedOutConnections: Int { state.withLock { $0.timedOut } }

    /// An HTTP/1 configuration with the guard's handler in every connection's pipeline.
    public func http1Configuration(_ base: HTTP1Channel.Configuration = .init()) -> HTTP1Channel.Configuration {
        var configuration = base
        let existing = base.additionalChannelHandlers
        configuration.additionalChannelHandlers = { [self] in existing() + [ConnectionGuardHandler(guard: self)] }
        return configuration
    }

    // MARK: The handler's reports

    /// A connection opened: registered, and room made if it is one too many.
    fileprivate func opened(_ channel: any Channel) {
        let now = DispatchTime.now().uptimeNanoseconds
        let victim: (any Channel)? = state.withLock { state in
            state.connections[ObjectIdentifier(channel)] = Entry(channel: channel, requestsInProgress: 0, idleSince: now)
            guard state.connections.count > limits.maximumConnections else { return nil }
            state.shed += 1
            // The longest idle connection other than this one; else this one.
            let idle = state.connections.filter { $0.key != ObjectIdentifier(channel) && $0.value.requestsInProgress == 0 }
            let oldest = idle.min { $0.value.idleSince < $1.value.idleSince }
            let chosen = oldest?.key ?? ObjectIdentifier(channel)
            return state.connections.removeValue(forKey: chosen)?.channel
        }
        victim?.close(promise: nil)
    }

    fileprivate func requestStarted(_ channel: any Channel) {
        state.withLock { $0.connections[ObjectIdentifier(channel)]?.requestsInProgress += 1 }
    }

    fileprivate func requestEnded(_ channel: any Channel) {
        let now = DispatchTime.now().uptimeNanoseconds
        state.withLock { state in
            guard var entry = state.connections[ObjectIdentifier(channel)] else { return }
            entry.requestsInProgress = max(0, entry.requestsInProgress - 1)
            if entry.requestsInProgress == 0 { entry.idleSince = now }
            state.connections[ObjectIdentifier(channel)] = entry
        }
    }

    fileprivate func timedOut(_ channel: any Channel) {
        state.withLock { $0.timedOut += 1 }
    }

    fileprivate func closed(_ channel: any Channel) {
        state.withLock { _ = $0.connections.removeValue(forKey: ObjectIdentifier(channel)) }
    }
}

/// The per-connection half of ``ConnectionGuard``: times the wait for each
/// request head and reports the connection's life to the guard. Runs on
/// the connection's event loop.
final class ConnectionGuardHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let guardian: ConnectionGuard
    private var timer: Scheduled<Void>?
    /// Running from a response's head until its end is written.
    private var writeTimer: Scheduled<Void>?
    private var requestsInProgress = 0
    private var registered = false

    init(guard guardian: ConnectionGuard) {
        self.guardian = guardian
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    private func start(_ context: ChannelHandlerContext) {
        guard !registered else { return }
        registered = true
        guardian.opened(context.channel)
        waitForHead(context, seconds: guardian.limits.readRequestTimeout)
    }

    func channelInactive(context: ChannelHandlerContext) {
        stop(context)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stop(context)
    }

    private func stop(_ context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        writeTimer?.cancel()
        writeTimer = nil
        if registered {
            registered = false
            guardian.closed(context.channel)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) {
            requestsInProgress += 1
            timer?.cancel()
            timer = nil
            guardian.requestStarted(context.channel)
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        var promise = promise
        switch unwrapOutboundIn(data) {
        case .head:
            startWriteTimer(context)
        case .end:
            // The response is out when its end is on the wire, not when it is queued.
            let written = promise ?? context.eventLoop.makePromise(of: Void.self)
            written.futureResult.assumeIsolated().whenComplete { [weak self] _ in
                self?.writeTimer?.cancel()
                self?.writeTimer = nil
            }
            promise = written
        case .body:
            break
        }
        if case .end = unwrapOutboundIn(data) {
            requestsInProgress = max(0, requestsInProgress - 1)
            guardian.requestEnded(context.channel)
            if requestsInProgress == 0 {
                let keepAlive = guardian.limits.keepAliveTimeout
                if keepAlive <= 0 {
                    context.writeAndFlush(data, promise: promise)
                    context.close(promise: nil)
                    return
                }
                waitForHead(context, seconds: keepAlive)
            }
        }
        context.write(data, promise: promise)
    }

    /// Closes the connection unless the response under way is written
    /// within ``ConnectionGuard/Limits/writeResponseTimeout``.
    private func startWriteTimer(_ context: ChannelHandlerContext) {
        writeTimer?.cancel()
        let nanoseconds = Int64(min(max(0, guardian.limits.writeResponseTimeout), 86_400) * 1e9)
        writeTimer = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(nanoseconds)) { [weak self] in
            guard let self, self.writeTimer != nil else { return }
            self.writeTimer = nil
            self.guardian.timedOut(context.channel)
            context.close(promise: nil)
        }
    }

    /// Closes the connection unless a request head arrives within `seconds`.
    private func waitForHead(_ context: ChannelHandlerContext, seconds: Double) {
        timer?.cancel()
        let nanoseconds = Int64(min(max(0, seconds), 86_400) * 1e9)
        let guardian = self.guardian
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(nanoseconds)) { [weak self] in
            guard let self, self.requestsInProgress == 0 else { return }
            self.timer = nil
            guardian.timedOut(context.channel)
            context.close(promise: nil)
        }
    }
}

@available(*, unavailable)
extension ConnectionGuardHandler: Sendable {}
#endif
