#if Server
import Foundation
import Imago
import ImagoServer

/// A `HostResolving` answered from a table: the image
/// server's source guard asks it instead of DNS, so a test never does a
/// real lookup and chooses every address the guard checks.
///
/// ```swift
/// let resolver = MockHostResolver(["images.example": ["203.0.113.7"]])
/// resolver.resolve("intranet.example", to: "10.0.0.7")   // the guard refuses it
/// configuration.resolver = resolver
/// ```
///
/// Names are matched without regard to case or a trailing dot. A name that
/// is not in the table fails with ``UnknownHost``, which names it and the
/// names the table has. A ``MockOrigin`` fills its own resolver with the
/// hosts it is stubbed for.
public final class MockHostResolver: HostResolving {
    /// The error for a name the table does not have.
    public struct UnknownHost: Error, Sendable, CustomStringConvertible {
        /// The name that was asked for.
        public let host: String
        /// The names the resolver has addresses for, sorted.
        public let knownHosts: [String]
        /// "MockHostResolver has no address for HOST (it has NAME, NAME)".
        public var description: String {
            let known = knownHosts.isEmpty ? "it has no names" : "it has \(knownHosts.joined(separator: ", "))"
            return "MockHostResolver has no address for \(host) (\(known))"
        }
    }

    private struct State {
        var table: [String: [IPAddress]] = [:]
        var lookups: [String] = []
    }

    private let state = Locked(State())

    /// Creates a resolver with `table`'s names and addresses, written as
    /// literals (`"203.0.113.7"`, `"2001:db8::1"`).
    ///
    /// - Precondition: every address is an IPv4 or IPv6 literal.
    public init(_ table: [String: [String]] = [:]) {
        for (host, literals) in table { resolve(host, to: literals.map(Self.address)) }
    }

    /// Makes `host` resolve to `addresses` (replacing what it resolved to),
    /// in that order: the guard checks every one and connects to the first.
    public func resolve(_ host: String, to addresses: [IPAddress]) {
        state.withLock { $0.table[Self.key(host)] = addresses }
    }

    /// Makes `host` resolve to the addresses written as `literals`.
    ///
    /// ```swift
    /// resolver.resolve("mixed.example", to: "203.0.113.7", "10.0.0.1")
    /// ```
    ///
    /// - Precondition: every literal is an IPv4 or IPv6 address.
    public func resolve(_ host: String, to literals: String...) {
        resolve(host, to: literals.map(Self.address))
    }

    /// Every name the guard asked for, in order (as it asked: with its case).
    public var lookups: [String] { state.withLock { $0.lookups } }

    /// The names the resolver has addresses for, sorted.
    public var hosts: [String] { state.withLock { $0.table.keys.sorted() } }

    /// Whether `host` has addresses in the table.
    public func knows(_ host: String) -> Bool {
        state.withLock { $0.table[Self.key(host)] != nil }
    }

    /// The addresses `host` was given, after recording the lookup.
    ///
    /// - Throws: ``UnknownHost`` for a name not in the table.
    public func addresses(for host: String) async throws -> [IPAddress] {
        let found = state.withLock { state -> [IPAddress]? in
            state.lookups.append(host)
            return state.table[Self.key(host)]
        }
        guard let found else { throw UnknownHost(host: host, knownHosts: hosts) }
        return found
    }

    /// How a name is looked up: lowercased, without a trailing dot.
    static func key(_ host: String) -> String {
        var name = host.lowercased()
        while name.hasSuffix(".") { name.removeLast() }
        return name
    }

    private static func address(_ literal: String) -> IPAddress {
        guard let address = IPAddress(literal) else {
            preconditionFailure("MockHostResolver: \(literal) is not an IPv4 or IPv6 address")
        }
        return address
    }
}
#endif
