#if Server
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns a host name into the addresses a connection to it would use: the
/// seam the source guard checks every name through.
///
/// Tests map names to addresses of their choosing; the server uses
/// ``SystemHostResolver``.
public protocol HostResolving: Sendable {
    /// Every address `host` resolves to (IPv4 and IPv6).
    ///
    /// - Throws: when the name does not resolve.
    func addresses(for host: String) async throws -> [IPAddress]
}

/// Resolves names with the system's resolver (`getaddrinfo`), off the
/// caller's thread.
public struct SystemHostResolver: HostResolving {
    /// The error for a name that does not resolve.
    public struct NotFound: Error, Sendable, CustomStringConvertible {
        /// The name.
        public let host: String
        /// The resolver's reason.
        public let reason: String
        public var description: String { "host not found: \(host) (\(reason))" }
    }

    /// Creates the resolver.
    public init() {}

    public func addresses(for host: String) async throws -> [IPAddress] {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try Self.resolve(host) })
            }
        }
    }

    private static func resolve(_ host: String) throws -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let first = list else {
            throw NotFound(host: host, reason: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(first) }
        var found: [IPAddress] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            if let address = current.pointee.ai_addr, let ip = Self.address(address, family: current.pointee.ai_family),
               !found.contains(ip) {
                found.append(ip)
            }
            entry = current.pointee.ai_next
        }
        return found
    }

    private static func address(_ socketAddress: UnsafeMutablePointer<sockaddr>, family: Int32) -> IPAddress? {
        switch family {
        case AF_INET:
            return socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { ipv4 in
                withUnsafeBytes(of: ipv4.pointee.sin_addr) { IPAddress(bytes: Array($0)) }
            }
        case AF_INET6:
            return socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { ipv6 in
                withUnsafeBytes(of: ipv6.pointee.sin6_addr) { IPAddress(bytes: Array($0)) }
            }
        default:
            return nil
        }
    }
}
#endif
