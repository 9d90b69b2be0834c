#if Server
import Foundation

/// Which sources the server may fetch: `http` and `https` from the
/// allowed hosts, and never from a loopback, private, link-local,
/// multicast, shared or unspecified address unless private networks are
/// allowed (tests and local origins need that); `local:///PATH` files
/// under ``localRoot`` when there is one.
///
/// ``check(_:)`` judges a URL before any connection: its scheme, its host
/// and, when the host is an address literal, that address. The loader then
/// calls ``check(_:resolvedFrom:)`` with every address a host name
/// resolves to, redirects included.
public struct SourcePolicy: Sendable, Hashable {
    /// The hosts sources may come from; empty allows any host.
    public var allowedHosts: [HostPattern]
    /// The kinds of non-public address sources may have (imgproxy's
    /// `IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES`, `_PRIVATE_` and
    /// `_LINK_LOCAL_`). Default: none.
    public var allowedAddresses: NonPublicAddresses
    /// Whether every non-public address is allowed (``allowedAddresses``
    /// is ``NonPublicAddresses/all``): for tests and local origins.
    public var allowsPrivateNetworks: Bool {
        get { allowedAddresses == .all }
        set { allowedAddresses = newValue ? .all : [] }
    }

    /// Kinds of non-public address, as imgproxy tells them apart.
    public struct NonPublicAddresses: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// 127.0.0.0/8 and ::1 (and `localhost` names).
        public static let loopback = NonPublicAddresses(rawValue: 1 << 0)
        /// 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, fc00::/7 and fec0::/10.
        public static let privateNetworks = NonPublicAddresses(rawValue: 1 << 1)
        /// 169.254.0.0/16 (cloud metadata services live there) and fe80::/10.
        public static let linkLocal = NonPublicAddresses(rawValue: 1 << 2)
        /// Unspecified, shared (CGNAT), multicast and reserved addresses.
        public static let other = NonPublicAddresses(rawValue: 1 << 3)
        /// Every non-public address.
        public static let all: NonPublicAddresses = [.loopback, .privateNetworks, .linkLocal, .other]

        /// The kind of a range ``IPAddress/nonPublicRange`` names.
        init(range: String) {
            switch range {
            case "loopback": self = .loopback
            case "private": self = .privateNetworks
            case "link-local": self = .linkLocal
            default: self = .other
            }
        }
    }
    /// The folder `local:///PATH` sources are read from; `nil` (the
    /// default) refuses them. See ``openLocalFile(for:)``.
    public var localRoot: URL?
    /// Whether `s3://BUCKET/KEY` sources are read (through the server's
    /// ``S3DataLoader``). Default: `false`.
    public var allowsS3: Bool = false
    /// Whether `gs://BUCKET/KEY` sources are read (through the server's
    /// ``S3DataLoader`` for ``S3DataLoader/Service/googleCloudStorage``).
    /// Default: `false`.
    public var allowsGCS: Bool = false

    /// Whether `service`'s sources are read.
    func allows(_ service: S3DataLoader.Service) -> Bool {
        switch service {
        case .s3: allowsS3
        case .googleCloudStorage: allowsGCS
        }
    }

    /// Creates a policy. By default: any public host, no local files.
    public init(allowedHosts: [HostPattern] = [], allowsPrivateNetworks: Bool = false, localRoot: URL? = nil) {
        self.allowedHosts = allowedHosts
        self.allowedAddresses = allowsPrivateNetworks ? .all : []
        self.localRoot = localRoot
    }

    /// Checks what can be judged from the URL alone.
    ///
    /// - Throws: ``ImageServerError/Code/forbiddenSource`` for another
    ///   scheme, a host that is not allowed, an address literal in a
    ///   non-public range, or a `localhost` name.
    public func check(_ url: URL) throws(ImageServerError) {
        if url.scheme?.lowercased() == "local" {
            _ = try localPath(for: url)
            return
        }
        if let service = S3DataLoader.Service(scheme: url.scheme) {
            guard allows(service) else {
                let flag = service == .s3 ? "--use-s3" : "--use-gcs"
                throw ImageServerError(.forbiddenSource, "\(service.name) sources are off: the server has no \(service.name) store (\(flag))")
            }
            guard let host = url.host, !host.isEmpty, url.path.count > 1 else {
                throw ImageServerError(.forbiddenSource, "\(service.name) sources are \(service.scheme)://BUCKET/KEY")
            }
            if !allowedHosts.isEmpty, !allowedHosts.contains(where: { $0.matches(host) }) {
                throw ImageServerError(.forbiddenSource, "the bucket \(host) is not among the allowed hosts")
            }
            _ = try S3DataLoader.keySegments(of: url)
            return
        }
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            let stores = S3DataLoader.Service.allCases.filter(allows).map(\.scheme)
            let schemes = ["http", "https"] + stores + (localRoot == nil ? [] : ["local"])
            let allowed = schemes.dropLast().joined(separator: ", ") + " and " + schemes.last!
            throw ImageServerError(.forbiddenSource, "only \(allowed) sources are allowed, not \(url.scheme ?? "a URL without a scheme")")
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
        } else if !allowedAddresses.contains(.loopback) {
            let name = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "."))
            if name == "localhost" || name.hasSuffix(".localhost") {
                throw ImageServerError(.forbiddenSource, "the host \(host) is a loopback name")
            }
        }
    }

    /// Checks one address that `host` resolved to (or is).
    ///
    /// - Throws: ``ImageServerError/Code/forbiddenSource`` when the address
    ///   is in a non-public range of a kind that is not allowed.
    public func check(_ address: IPAddress, resolvedFrom host: String) throws(ImageServerError) {
        guard let range = address.nonPublicRange, !allowedAddresses.contains(NonPublicAddresses(range: range)) else { return }
        let via = host == address.description || host == "[\(address)]" ? "" : " (\(host))"
        throw ImageServerError(.forbiddenSource, "the source address \(address)\(via) is \(range), which is not allowed")
    }
}
#endif
