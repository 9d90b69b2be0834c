#if Server
import Foundation

/// Which sources the server may fetch: `http` and `https` only, from the
/// allowed hosts, and never from a loopback, private, link-local,
/// multicast, shared or unspecified address unless private networks are
/// allowed (tests and local origins need that).
///
/// ``check(_:)`` judges a URL before any connection: its scheme, its host
/// and, when the host is an address literal, that address. The loader then
/// calls ``check(_:resolvedFrom:)`` with every address a host name
/// resolves to, redirects included.
public struct SourcePolicy: Sendable, Hashable {
    /// The hosts sources may come from; empty allows any host.
    public var allowedHosts: [HostPattern]
    /// Whether non-public addresses are allowed.
    public var allowsPrivateNetworks: Bool

    /// Creates a policy. By default: any public host.
    public init(allowedHosts: [HostPattern] = [], allowsPrivateNetworks: Bool = false) {
        self.allowedHosts = allowedHosts
        self.allowsPrivateNetworks = allowsPrivateNetworks
    }

    /// Checks what can be judged from the URL alone.
    ///
    /// - Throws: ``ImageServerError/Code/forbiddenSource`` for another
    ///   scheme, a host that is not allowed, an address literal in a
    ///   non-public range, or a `localhost` name.
    public func check(_ url: URL) throws(ImageServerError) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw ImageServerError(.forbiddenSource, "only http and https sources are allowed, not \(url.scheme ?? "a URL without a scheme")")
        }
        guard let host = url.host, !host.isEmpty else {
            throw ImageServerError(.forbiddenSource, "the source has no host")
        }
        if !allowedHosts.isEmpty, !allowedHosts.contains(where: { $0.matches(host) }) {
            throw ImageServerError(.forbiddenSource, "the host \(host) is not among the allowed hosts")
        }
        guard !allowsPrivateNetworks else { return }
        if let address = IPAddress(host) {
            try check(address, resolvedFrom: host)
        } else {
            let name = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "."))
            if name == "localhost" || name.hasSuffix(".localhost") {
                throw ImageServerError(.forbiddenSource, "the host \(host) is a loopback name")
            }
        }
    }

    /// Checks one address that `host` resolved to (or is).
    ///
    /// - Throws: ``ImageServerError/Code/forbiddenSource`` when the address
    ///   is in a non-public range and private networks are not allowed.
    public func check(_ address: IPAddress, resolvedFrom host: String) throws(ImageServerError) {
        guard !allowsPrivateNetworks, let range = address.nonPublicRange else { return }
        let via = host == address.description || host == "[\(address)]" ? "" : " (\(host))"
        throw ImageServerError(.forbiddenSource, "the source address \(address)\(via) is \(range), which is not allowed")
    }
}
#endif
