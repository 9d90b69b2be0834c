import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import SharedState

/// `imago serve --so-reuseport` (imgproxy's `IMGPROXY_SO_REUSEPORT`): the
/// HTTP listener bound with `SO_REUSEPORT`, so several processes share one
/// port and the kernel spreads connections among them.
///
/// Hummingbird's `Application` binds its own socket with no way to set
/// that option, so the application is given a listener nobody reaches (a
/// Unix socket in a private temporary folder) and this service accepts on
/// the real address, handing each connection to the application's own
/// HTTP/1 channel: the same responder, headers, limits and connection
/// guard as without the flag. `HTTPServerBuilder` gives that channel to
/// ``builder(_:)``'s caller when the application builds it.
final class ReusePortListener: Service, Sendable {
    private let host: String
    private let port: Int
    private let backlog: Int
    private let logger: Logger
    private let onListening: @Sendable (Int) -> Void
    /// The application's HTTP/1 channel, once it has built it.
    private let channel = Locked<HTTP1Channel?>(nil)
    /// The folder of the application's unreached socket.
    let folder: URL

    init(host: String, port: Int, backlog: Int, logger: Logger, onListening: @escaping @Sendable (Int) -> Void) throws {
        self.host = host
        self.port = port
        self.backlog = backlog
        self.logger = logger
        self.onListening = onListening
        var template = Array((FileManager.default.temporaryDirectory.path + "/imago-listener-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw Failed(reason: "no private folder for the application's socket: \(String(cString: strerror(errno)))") }
        folder = URL(fileURLWithPath: String(cString: made), isDirectory: true)
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    /// Where the application itself listens: a socket only this process can reach (its folder is 0700).
    var applicationAddress: BindAddress { .unixDomainSocket(path: folder.appendingPathComponent("unreached.sock").path) }

    /// The server builder for the application: HTTP/1 with `configuration`,
    /// its channel kept for this listener.
    func builder(_ configuration: HTTP1Channel.Configuration) -> HTTPServerBuilder {
        HTTPServerBuilder { [channel] responder in
            let built = HTTP1Channel(responder: responder, configuration: configuration)
            channel.withLock { $0 = built }
            return built
        }
    }

    func run() async throws {
        // The application builds its channel as it starts, beside this service.
        var http1: HTTP1Channel?
        for _ in 0..<6000 {
            http1 = channel.withLock { $0 }
            if http1 != nil || Task.isCancelled { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        guard let http1 else { throw Failed(reason: "the application did not start its HTTP channel") }
        let logger = self.logger
        let server: NIOAsyncChannel<HTTP1Channel.Value, Never> = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.backlog, value: numericCast(backlog))
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(ChannelOptions.socketOption(NIOBSDSocket.Option(rawValue: SO_REUSEPORT)), value: 1)
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .bind(host: host, port: port) { child in http1.setup(channel: child, logger: logger) }
        onListening(server.channel.localAddress?.port ?? port)
        // A graceful stop closes the listener; connections under way finish
        // as the application's own would (the channel's handler closes them after their request).
        try await withGracefulShutdownHandler {
            try await server.executeThenClose { inbound in
                await withDiscardingTaskGroup { group in
                    do {
                        for try await connection in inbound {
                            group.addTask { await http1.handle(value: connection, logger: logger) }
                        }
                    } catch {
                        logger.debug("the listener stopped accepting", metadata: ["error": "\(error)"])
                    }
                }
            }
        } onGracefulShutdown: {
            server.channel.close(promise: nil)
        }
    }

    struct Failed: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }
}
