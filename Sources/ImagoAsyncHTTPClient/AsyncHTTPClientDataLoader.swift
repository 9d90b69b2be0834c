// The whole module needs the `AsyncHTTPClient` trait (see Package.swift):
// without it, a user of the library resolves none of SwiftNIO.
#if AsyncHTTPClient
import AsyncHTTPClient
import Foundation
import Imago
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix
import NIOSSL
import Tracing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Loads `http` and `https` URLs with AsyncHTTPClient, on SwiftNIO: for
/// servers and command-line tools, where it costs less per request than
/// `URLSession` does on Linux.
///
/// It keeps the same limits as ``URLSessionDataLoader``: the body size
/// (from `Content-Length` and while streaming), at most
/// ``Configuration/maximumRedirects`` redirects with loop detection, and
/// connect, idle and total timeouts; every failure is a `DataLoadingError`
/// naming the URL and the cause. Like that loader, it makes one attempt per
/// request: wrap it in a `RetryingDataLoader` to retry.
///
/// Inside a trace (a `ServiceContext` is current, as in a swift-distributed-tracing
/// span), each request is a client span named after its method, from the
/// request to the body's end, and its context is sent on in the request's
/// headers (`traceparent` with a W3C tracer): the origin continues the
/// trace. It uses the tracer bootstrapped when the request is made; with
/// none (or outside a trace) it adds nothing.
///
/// ```swift
/// var configuration = ImagePipeline.Configuration.withCodecs
/// configuration.dataLoader = DataLoader(network: RetryingDataLoader(wrapping: AsyncHTTPClientDataLoader()))
/// let pipeline = ImagePipeline(configuration: configuration)
/// ```
public final class AsyncHTTPClientDataLoader: DataLoading {
    /// Settings for the client and its limits.
    public struct Configuration: Sendable {
        /// The largest body accepted, in bytes (after decompression). Default: 25 MB.
        public var maximumResponseSize: Int = DataLoader.defaultMaximumResponseSize
        /// Whether 3xx responses with a `Location` are followed.
        public var followsRedirects: Bool = true
        /// How many redirects one request may follow. Default: 5.
        public var maximumRedirects: Int = 5
        /// How long connecting may take. Default: 10 s.
        public var connectTimeout: TimeInterval = 10
        /// How long the connection may stay idle while waiting for data. Default: 30 s.
        public var idleTimeout: TimeInterval = 30
        /// How long a whole load may take. Default: 120 s.
        public var totalTimeout: TimeInterval = 120
        /// How many connections the client keeps to one host. Default: 8.
        public var maximumConnectionsPerHost: Int = 8
        /// How long an idle connection is kept for the next request to
        /// its host. Default: 60 s.
        public var connectionIdleTimeout: TimeInterval = 60
        /// Whether an `https` server's certificate must be valid for its
        /// name. Turning it off accepts any certificate (self-signed, expired,
        /// for another name): only for origins on a network you trust.
        /// Default: `true`.
        public var verifiesCertificates: Bool = true

        /// Creates a configuration with the defaults above.
        public init() {}
    }

    /// The configuration the loader was created with.
    public let configuration: Configuration
    private let client: HTTPClient
    /// Whether the loader made the client, and so shuts it down.
    private let ownsClient: Bool
    private let logger: Logger
    /// Whether the loader makes the client spans and sends the trace
    /// context (not when the client has a tracer of its own).
    private let tracesRequests: Bool

    /// Creates a loader over a client the application already has, such as
    /// `HTTPClient.shared`; the application keeps it and shuts it down.
    ///
    /// The client keeps its own redirect, connect-timeout and pool
    /// settings; the loader applies the body limit and the total timeout of
    /// `configuration` to every request. A client with a tracer of its own
    /// (AsyncHTTPClient's `tracing` configuration) makes the client spans
    /// and sends the trace context itself; the loader then adds neither.
    ///
    /// - Parameter logger: Passed to the client with each request; the
    ///   loader logs each response and failure at `debug`. Default: nowhere.
    public init(client: HTTPClient, configuration: Configuration = Configuration(), logger: Logger = .disabled) {
        self.configuration = configuration
        self.client = client
        self.ownsClient = false
        self.logger = logger
        self.tracesRequests = client.tracer.map { $0 is NoOpTracer } ?? true
    }

    /// Creates a loader with its own client on NIO's shared event loops; the
    /// client shuts down when the loader goes away.
    ///
    /// - Parameter logger: Passed to the client with each request; the
    ///   loader logs each response and failure at `debug`. Default: nowhere.
    public init(configuration: Configuration = Configuration(), logger: Logger = .disabled) {
        self.configuration = configuration
        self.ownsClient = true
        self.logger = logger
        self.tracesRequests = true
        var pool = HTTPClient.Configuration.ConnectionPool(
            idleTimeout: Self.timeAmount(configuration.connectionIdleTimeout),
            concurrentHTTP1ConnectionsPerHostSoftLimit: configuration.maximumConnectionsPerHost
        )
        // A refused connection fails at once; retrying is the RetryingDataLoader's job.
        pool.retryConnectionEstablishment = false
        var clientConfiguration = HTTPClient.Configuration(
            redirectConfiguration: configuration.followsRedirects
                ? .follow(max: configuration.maximumRedirects, allowCycles: false)
                : .disallow,
            timeout: .init(connect: Self.timeAmount(configuration.connectTimeout), read: Self.timeAmount(configuration.idleTimeout)),
            connectionPool: pool,
            decompression: .enabled(limit: .size(configuration.maximumResponseSize))
        )
        // The loader traces its requests itself, with the tracer of the
        // moment (the client would keep the one of its creation, and send a
        // second `traceparent`).
        clientConfiguration.tracing.tracer = nil
        if !configuration.verifiesCertificates {
            clientConfiguration.tlsConfiguration = HTTPClient.Configuration(certificateVerification: .none).tlsConfiguration
        }
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: clientConfiguration)
    }

    deinit {
        if ownsClient { _ = client.shutdown() }
    }

    /// Sends `request` and returns once the response head arrived; the
    /// body streams in as the client receives it.
    ///
    /// - Throws: ``DataLoadingError`` for a failure before the response (no
    ///   connection, a timeout, a redirect limit, a `Content-Length` over
    ///   the limit), or with ``DataLoadingError/Code/cancelled`` when the
    ///   calling task is cancelled.
    public func load(_ request: URLRequest) async throws -> DataLoadingResponse {
        guard let url = request.url else {
            throw DataLoadingError(.unsupportedScheme, url: nil, message: "the request has no URL")
        }
        var outgoing = HTTPClientRequest(url: url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.httpMethod ?? "GET")
        for (name, value) in request.allHTTPHeaderFields ?? [:] { outgoing.headers.add(name: name, value: value) }
        if let body = request.httpBody { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        let span = tracesRequests ? ClientSpan(for: &outgoing, url: url) : nil
        let limit = configuration.maximumResponseSize
        let deadline = NIODeadline.now() + Self.timeAmount(configuration.totalTimeout)
        let response: HTTPClientResponse
        do {
            response = try await client.execute(outgoing, deadline: deadline, logger: logger)
        } catch {
            let failure = failure(for: error, url: url)
            span?.end(failure: failure)
            throw logged(failure, url: url)
        }
        span?.received(status: Int(response.status.code))
        logger.debug("response", metadata: ["url": "\(url.absoluteString)", "status": "\(response.status.code)"])
        if let declared = response.headers.first(name: "Content-Length").flatMap(Int.init), declared > limit {
            let failure = DataLoadingError(.responseTooLarge, url: url, message: "Content-Length is \(declared) bytes; the limit is \(limit)")
            span?.end(failure: failure)
            throw failure
        }
        let (body, chunks) = AsyncThrowingStream.makeStream(of: Data.self)
        let relay = Task {
            do {
                try await self.relay(response.body, into: chunks, url: url)
                chunks.finish()
            } catch {
                chunks.finish(throwing: logged(error, url: url))
            }
        }
        // The client's deadline covers the response head, not a body that
        // keeps trickling in: the total timeout is kept here, by a timer on
        // the client's event loop (cheaper than a task that sleeps).
        let totalTimeout = configuration.totalTimeout
        let timer = client.eventLoopGroup.next().scheduleTask(deadline: deadline) { [logger] in
            logger.debug("load failed", metadata: ["url": "\(url.absoluteString)", "error": "total timeout"])
            chunks.finish(throwing: DataLoadingError(.timedOut, url: url, message: "the load took longer than \(totalTimeout) s"))
            relay.cancel()
        }
        // The body ended, or its reader stopped early (cancelled, or gone):
        // the timer goes, and so does the load.
        chunks.onTermination = { termination in
            timer.cancel()
            relay.cancel()
            span?.end(after: termination)
        }
        return DataLoadingResponse(response: Self.urlResponse(response, for: url), body: body)
    }

    /// Passes the body on as `Data` chunks, up to the size limit.
    private func relay(_ body: HTTPClientResponse.Body, into chunks: AsyncThrowingStream<Data, any Error>.Continuation, url: URL) async throws {
        let limit = configuration.maximumResponseSize
        var received = 0
        do {
            for try await buffer in body {
                received += buffer.readableBytes
                if received > limit {
                    throw DataLoadingError(.responseTooLarge, url: url, message: "the body grew past the limit of \(limit) bytes")
                }
                chunks.yield(Self.data(sharing: buffer))
            }
        } catch let error as DataLoadingError {
            throw error
        } catch {
            let failure = failure(for: error, url: url)
            guard failure.code == .transport else { throw failure }
            let message = "the connection closed after \(received) bytes of the body: \(error)"
            throw DataLoadingError(.connectionLost, url: url, message: message, underlying: error)
        }
    }

    /// `error`, logged as a failed load.
    private func logged(_ error: any Error, url: URL) -> any Error {
        logger.debug("load failed", metadata: ["url": "\(url.absoluteString)", "error": "\(error)"])
        return error
    }

    /// `seconds` as NIO's time amount.
    static func timeAmount(_ seconds: TimeInterval) -> TimeAmount {
        .nanoseconds(Int64(min(max(seconds, 0), 1e9) * 1e9))
    }

    /// `buffer`'s readable bytes as `Data` that shares its storage (kept
    /// alive until the `Data` goes), not a copy: a body's bytes are copied
    /// once, into the whole body, not chunk by chunk first.
    static func data(sharing buffer: ByteBuffer) -> Data {
        buffer.withUnsafeReadableBytesWithStorageManagement { bytes, storage in
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return Data() }
            _ = storage.retain()
            return Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: base), count: bytes.count, deallocator: .custom { _, _ in storage.release() })
        }
    }

    /// The loader's error for what AsyncHTTPClient or NIO threw.
    private func failure(for thrown: any Error, url: URL) -> DataLoadingError {
        func error(_ code: DataLoadingError.Code, _ message: String, underlying: any Error) -> DataLoadingError {
            DataLoadingError(code, url: url, message: message, underlying: underlying)
        }
        if thrown is CancellationError || Task.isCancelled {
            return error(.cancelled, "the load was cancelled", underlying: thrown)
        }
        if let client = thrown as? HTTPClientError {
            switch client {
            case .cancelled: return error(.cancelled, "the load was cancelled", underlying: thrown)
            case .connectTimeout: return error(.timedOut, "connecting took longer than \(configuration.connectTimeout) s", underlying: thrown)
            case .readTimeout: return error(.timedOut, "no data for \(configuration.idleTimeout) s", underlying: thrown)
            case .deadlineExceeded: return error(.timedOut, "the load took longer than \(configuration.totalTimeout) s", underlying: thrown)
            case .redirectLimitReached: return error(.tooManyRedirects, "more than \(configuration.maximumRedirects) redirects", underlying: thrown)
            case .redirectCycleDetected: return error(.redirectLoop, "a redirect leads back to a URL already visited", underlying: thrown)
            case .remoteConnectionClosed, .bodyLengthMismatch:
                return error(.connectionLost, "the connection closed before the body was complete", underlying: thrown)
            default: break
            }
        }
        if thrown is NIOConnectionError {
            return error(.cannotConnect, "cannot connect: \(Self.connectionReason(thrown))", underlying: thrown)
        }
        if let io = thrown as? IOError {
            switch io.errnoCode {
            case ECONNRESET, EPIPE: return error(.connectionLost, "the connection was reset", underlying: thrown)
            case ECONNREFUSED, EHOSTUNREACH, ENETUNREACH: return error(.cannotConnect, "cannot connect: \(Self.connectionReason(io))", underlying: thrown)
            default: break
            }
        }
        if let parser = thrown as? HTTPParserError, case .invalidEOFState = parser {
            return error(.connectionLost, "the connection closed before the body was complete", underlying: thrown)
        }
        if let channel = thrown as? ChannelError, case .eof = channel {
            return error(.connectionLost, "the connection closed before the body was complete", underlying: thrown)
        }
        if thrown is NIOSSLError || thrown is BoringSSLError || thrown is NIOSSLExtraError {
            // An untrusted or expired certificate, another name's, or no common protocol.
            return error(.cannotConnect, "cannot connect: the TLS handshake failed (\(thrown))", underlying: thrown)
        }
        if let decompression = thrown as? NIOHTTPDecompression.DecompressionError, case .limit = decompression {
            return error(.responseTooLarge, "the decompressed body grew past the limit of \(configuration.maximumResponseSize) bytes", underlying: thrown)
        }
        return error(.transport, String(describing: thrown), underlying: thrown)
    }

    /// Why a connection failed, in a few lower-case words ("connection
    /// refused", "host not found: example.invalid"), without NIO's wrapping.
    private static func connectionReason(_ thrown: any Error) -> String {
        if let io = thrown as? IOError {
            return String(cString: strerror(io.errnoCode)).lowercased()
        }
        if let connection = thrown as? NIOConnectionError {
            if let first = connection.connectionErrors.first { return connectionReason(first.error) }
            if connection.dnsAError != nil || connection.dnsAAAAError != nil { return "host not found: \(connection.host)" }
        }
        return String(describing: thrown)
    }

    /// An `HTTPURLResponse` for the final URL, with the headers joined as HTTP allows.
    private static func urlResponse(_ response: HTTPClientResponse, for requested: URL) -> HTTPURLResponse {
        var fields: [String: String] = [:]
        for (name, value) in response.headers {
            if let existing = fields[name] { fields[name] = existing + ", " + value } else { fields[name] = value }
        }
        let url = response.url ?? requested
        return HTTPURLResponse(url: url, statusCode: Int(response.status.code), httpVersion: "HTTP/\(response.version.major).\(response.version.minor)", headerFields: fields)
            ?? HTTPURLResponse(url: requested, statusCode: Int(response.status.code), httpVersion: nil, headerFields: fields)!
    }
}
#endif
