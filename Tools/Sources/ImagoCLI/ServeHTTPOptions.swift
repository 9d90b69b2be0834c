import ArgumentParser
import Foundation
import Hummingbird
import ImagoServer

/// `imago serve`'s settings for the listener and the answers' extra
/// headers: imgproxy's server variables of the same names.
struct ServeHTTPOptions: ParsableArguments {
    @Option(help: "Where to listen, HOST:PORT (:PORT for every address), or a socket path with --network unix; over --host and --port (IMGPROXY_BIND).")
    var bind: String?

    @Option(help: "tcp, tcp4, tcp6 or unix: with tcp4 or tcp6, a --bind without a host listens on every IPv4 or IPv6 address (IMGPROXY_NETWORK).")
    var network = "tcp"

    @Flag(help: "Bind with SO_REUSEPORT, so several imago serve processes share the port and the kernel spreads connections among them (IMGPROXY_SO_REUSEPORT; TCP only).")
    var soReuseport = false

    @Option(help: "The most seconds from a response's head to its last byte; a client that reads slower is cut off (IMGPROXY_WRITE_RESPONSE_TIMEOUT).")
    var writeResponseTimeout = 10.0

    @Flag(help: "Add X-Origin-Width, X-Origin-Height, X-Origin-Content-Length, X-Result-Width and X-Result-Height to processed answers (IMGPROXY_ENABLE_DEBUG_HEADERS).")
    var debugHeaders = false

    @Flag(help: "Add Link: <SOURCE>; rel=\"canonical\" to answers for HTTP and HTTPS sources (IMGPROXY_SET_CANONICAL_HEADER).")
    var canonicalHeader = false

    @Flag(help: "Accepted for imgproxy's IMGPROXY_DEVELOPMENT_ERRORS_MODE: error bodies always give the full reason, so it changes nothing.")
    var developmentErrors = false

    @Flag(help: "Pass the client's cookies to a raw source on the host the client asked for (IMGPROXY_COOKIE_PASSTHROUGH).")
    var cookiePassthrough = false

    @Flag(help: "With --cookie-passthrough, pass them to every raw source (IMGPROXY_COOKIE_PASSTHROUGH_ALL).")
    var cookiePassthroughAll = false

    @Option(help: "With --cookie-passthrough, the cookies belong to this URL's host instead of the one asked for (IMGPROXY_COOKIE_BASE_URL).")
    var cookieBaseUrl: String?

    /// Where the server listens.
    enum Address: Equatable {
        case tcp(host: String, port: Int)
        case unix(path: String)
    }

    func validate() throws {
        guard ["tcp", "tcp4", "tcp6", "unix"].contains(network.lowercased()) else {
            throw ValidationError("--network must be tcp, tcp4, tcp6 or unix, not \(network).")
        }
        guard writeResponseTimeout.isFinite, writeResponseTimeout > 0, writeResponseTimeout <= 86_400 else {
            throw ValidationError("--write-response-timeout must be seconds above 0, at most a day.")
        }
        if soReuseport, network.lowercased() == "unix" { throw ValidationError("--so-reuseport is for TCP; a Unix socket path has one listener.") }
        _ = try address(host: "127.0.0.1", port: 8080)
        if let cookieBaseUrl, !cookieBaseUrl.isEmpty, URL(string: cookieBaseUrl)?.host == nil {
            throw ValidationError("--cookie-base-url must be a URL with a host, not \(cookieBaseUrl).")
        }
    }

    /// The address to listen on: `--bind` when given (as `--network` reads
    /// it), else `host` and `port`.
    func address(host: String, port: Int) throws -> Address {
        let network = network.lowercased()
        guard let bind else {
            if network == "unix" { throw ValidationError("--network unix needs --bind with a socket path.") }
            return .tcp(host: host, port: port)
        }
        if network == "unix" {
            guard !bind.isEmpty, bind.utf8.count < 108 else { throw ValidationError("--bind must be a socket path under 108 bytes.") }
            return .unix(path: bind)
        }
        guard let colon = bind.lastIndex(of: ":"), let boundPort = Int(bind[bind.index(after: colon)...]), (0...65_535).contains(boundPort) else {
            throw ValidationError("--bind must be HOST:PORT or :PORT, not \(bind).")
        }
        var boundHost = String(bind[..<colon])
        if boundHost.hasPrefix("["), boundHost.hasSuffix("]") { boundHost = String(boundHost.dropFirst().dropLast()) }
        if boundHost.isEmpty { boundHost = network == "tcp6" ? "::" : "0.0.0.0" }
        let isAddress = IPAddress(boundHost) != nil
        let isName = boundHost.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") } && boundHost.first != "-"
        guard isAddress || isName else { throw ValidationError("--bind: \(boundHost) is not an address or a host name.") }
        return .tcp(host: boundHost, port: boundPort)
    }

    /// Sets the answers' extra headers on `configuration`.
    func apply(to configuration: inout ImageServerConfiguration) {
        configuration.sendsDebugHeaders = debugHeaders
        configuration.sendsCanonicalLink = canonicalHeader
        if cookiePassthrough {
            configuration.cookiePassthrough = cookiePassthroughAll ? .all
                : .sameHost(as: cookieBaseUrl.flatMap { $0.isEmpty ? nil : URL(string: $0) })
        }
    }

    /// The settings, one `flag = value` line each, for `--print-config`.
    var configurationLines: [(String, String)] {
        [("bind", bind ?? "(--host:--port)"), ("network", network), ("so-reuseport", "\(soReuseport)"), ("write-response-timeout", "\(writeResponseTimeout)"),
         ("debug-headers", "\(debugHeaders)"), ("canonical-header", "\(canonicalHeader)"), ("development-errors", "\(developmentErrors)"),
         ("cookie-passthrough", "\(cookiePassthrough)"), ("cookie-passthrough-all", "\(cookiePassthroughAll)"), ("cookie-base-url", cookieBaseUrl ?? "(none)")]
    }
}
