#if Server
import Foundation
import Imago
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A loader that lets a request reach only the sources a ``SourcePolicy``
/// allows, checking every hop: the image server's defence against
/// server-side request forgery.
///
/// For each URL, the first and every redirect target, it checks the scheme
/// and host, resolves the host, and refuses the load when any address it
/// resolves to is in a non-public range (unless the policy allows private
/// networks). It follows redirects itself, so the `transport` must not:
/// configure it with redirects off. For `http`, the connection is pinned
/// to the checked address (the URL names the address, `Host` the name), so
/// a name that resolves differently a moment later cannot slip through. For
/// `https` the transport resolves the name again to connect: a window for
/// DNS rebinding that only a transport with a connect hook could close.
///
/// A refused load fails with ``ImageServerError`` (``ImageServerError/Code/forbiddenSource``).
package struct GuardedDataLoader: DataLoading {
    /// What loads each checked hop; must not follow redirects.
    package let transport: any DataLoading
    /// Which sources are allowed.
    package let policy: SourcePolicy
    /// How host names become addresses.
    package let resolver: any HostResolving
    /// How many redirects one load may follow.
    package let maximumRedirects: Int
    /// The `User-Agent` every request carries unless it has one; `nil`: none added.
    package let userAgent: String?
    /// What reads `local:///PATH` sources, once the policy has opened them beneath its root.
    package let files: FileDataLoader
    /// What reads `s3://BUCKET/KEY` sources when the policy allows them.
    package let s3: S3DataLoader?
    /// What reads `gs://BUCKET/KEY` sources when the policy allows them.
    package let gcs: S3DataLoader?
    /// Download slots per host, then in all.
    private(set) var slots: DownloadSlots

    /// Creates a guarded loader.
    ///
    /// - Parameters:
    ///   - downloadsPerHost: With a value, at most this many downloads from
    ///     one host run at once; the others wait, each at most
    ///     `hostSlotWait` seconds; a download that finds no slot in time
    ///     fails as ``DataLoadingError/Code/timedOut``. Other hosts never wait.
    ///   - totalDownloads: With a value, at most this many downloads run at
    ///     once in all, taken after a host's slot (so a slow host's waiting
    ///     downloads hold none), with the same bounded wait.
    package init(transport: any DataLoading, policy: SourcePolicy, resolver: any HostResolving = SystemHostResolver(), maximumRedirects: Int = 5,
                userAgent: String? = nil, files: FileDataLoader = FileDataLoader(), s3: S3DataLoader? = nil, gcs: S3DataLoader? = nil,
                downloadsPerHost: Int? = nil, totalDownloads: Int? = nil, hostSlotWait: Double = 5) {
        self.slots = DownloadSlots(perHost: downloadsPerHost, total: totalDownloads, maximumWait: hostSlotWait)
        self.transport = transport
        self.policy = policy
        self.resolver = resolver
        self.maximumRedirects = maximumRedirects
        self.userAgent = userAgent
        self.files = files
        self.s3 = s3
        self.gcs = gcs
    }

    /// Loads `request` hop by hop: each URL is checked before the transport
    /// loads it, and a redirect is followed only to a URL that passes too.
    ///
    /// - Throws: ``ImageServerError`` (``ImageServerError/Code/forbiddenSource``)
    ///   for a refused URL or address; ``DataLoadingError`` when the host
    ///   cannot be resolved, for too many redirects or a loop; else what the
    ///   transport throws.
    package func load(_ request: URLRequest) async throws -> DataLoadingResponse {
        var request = request
        if let userAgent, request.value(forHTTPHeaderField: "User-Agent") == nil {
            request.setValue(userAgent, forHTTPHeaderField: "User-Agent")
        }
        if let url = request.url, url.scheme?.lowercased() == "local" {
            // A file beneath the local root, opened off the cooperative threads and
            // read with the file loader's size limit, answered under the local URL.
            let policy = self.policy
            let descriptor = try await FileDataLoader.onIOQueue { () throws(DataLoadingError) -> Result<Int32, ImageServerError> in
                do throws(ImageServerError) { return .success(try policy.openLocalFile(for: url)) } catch { return .failure(error) }
            }.get()
            do {
                return try await files.load(descriptor: descriptor, for: url, request: request)
            } catch let error as DataLoadingError where error.code == .fileUnreadable {
                throw ImageServerError(.forbiddenSource, "local:\(url.path.prefix(200)) is not served: \(error.message)")
            }
        }
        if let url = request.url, let service = S3DataLoader.Service(scheme: url.scheme) {
            // The store is the operator's own: no address check, no redirects.
            try policy.check(url)
            guard let store = service == .s3 ? s3 : gcs else {
                throw ImageServerError(.forbiddenSource, "\(service.name) sources are off: the server has no \(service.name) store")
            }
            return try await store.load(request)
        }
        var hopRequest = request
        var visited: Set<String> = [request.url?.absoluteString ?? ""]
        var hop = 0
        while true {
            let outgoing = try await checked(hopRequest)
            let url = hopRequest.url!
            // One host's slots, held until its body is read: a slow host waits on itself only.
            let host = "\(url.host ?? ""):\(url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80))"
            try await slots.acquire(for: host, url: url)
            let loaded: DataLoadingResponse
            do {
                loaded = try await transport.load(outgoing)
            } catch {
                slots.release(for: host)
                throw error
            }
            guard let http = loaded.response as? HTTPURLResponse, [301, 302, 303, 307, 308].contains(http.statusCode),
                  let location = http.value(forHTTPHeaderField: "Location") else {
                let answered = DataLoadingResponse(response: loaded.response.map { Self.response($0, as: url) }, body: loaded.body)
                return slots.holding(answered, for: host)
            }
            slots.release(for: host)
            // The redirect's body is dropped unread, which stops that hop.
            guard let target = URL(string: location, relativeTo: url)?.absoluteURL else {
                throw DataLoadingError(.transport, url: url, message: "the redirect's Location is not a URL: \(location)")
            }
            guard hop < maximumRedirects else {
                throw DataLoadingError(.tooManyRedirects, url: target, message: "more than \(maximumRedirects) redirects")
            }
            guard visited.insert(target.absoluteString).inserted else {
                throw DataLoadingError(.redirectLoop, url: target, message: "a redirect leads back to a URL already visited")
            }
            // A client's cookies (raw's cookie passthrough) and credentials never follow to another host.
            if target.host?.lowercased() != url.host?.lowercased() {
                for name in ["Cookie", "Authorization"] { hopRequest.setValue(nil, forHTTPHeaderField: name) }
            }
            hopRequest.url = target
            hopRequest.setValue(nil, forHTTPHeaderField: "Host")
            hop += 1
        }
    }

    /// This loader with the same host slots and no total: for `raw`
    /// streams, which have a limit of their own, so they never take an
    /// image's download slot.
    var withoutTotalLimit: GuardedDataLoader {
        var copy = self
        copy.slots = slots.withoutTotal
        return copy
    }

    /// The request to send: the URL checked against the policy and every
    /// address of its host; for `http`, pinned to the checked address.
    private func checked(_ hopRequest: URLRequest) async throws -> URLRequest {
        guard let url = hopRequest.url else {
            throw ImageServerError(.forbiddenSource, "the source has no URL")
        }
        try policy.check(url)
        guard !policy.allowsPrivateNetworks, let host = url.host else { return hopRequest }
        let addresses: [IPAddress]
        if let literal = IPAddress(host) {
            addresses = [literal]
        } else {
            do {
                addresses = try await resolver.addresses(for: host)
            } catch {
                throw DataLoadingError(.cannotConnect, url: url, message: "cannot connect: \(error)", underlying: error)
            }
        }
        guard let first = addresses.first else {
            throw DataLoadingError(.cannotConnect, url: url, message: "cannot connect: host not found: \(host)")
        }
        // Every address, not only the first: a name that answers with a
        // public and a private address must not get through.
        for address in addresses { try policy.check(address, resolvedFrom: host) }
        guard url.scheme?.lowercased() == "http", IPAddress(host) == nil,
              var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return hopRequest }
        components.host = first.isIPv4 ? first.description : "[\(first)]"
        guard let pinned = components.url else { return hopRequest }
        var outgoing = hopRequest
        outgoing.url = pinned
        outgoing.setValue(url.port.map { "\(host):\($0)" } ?? host, forHTTPHeaderField: "Host")
        return outgoing
    }

    /// The transport's response, under the URL the caller asked for rather than a pinned address.
    static func response(_ response: URLResponse, as url: URL) -> URLResponse {
        guard let http = response as? HTTPURLResponse, http.url != url else { return response }
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name] = value }
        }
        return HTTPURLResponse(url: url, statusCode: http.statusCode, httpVersion: nil, headerFields: fields) ?? response
    }
}
#endif
