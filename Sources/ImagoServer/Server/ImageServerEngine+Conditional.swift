#if Server
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Imago

/// Conditional requests passed to the source, as imgproxy does: a client
/// that holds a version of the answer sends `If-None-Match` or
/// `If-Modified-Since`, the source decides, and its 304 is answered without
/// a download or a render.
extension ImageServerEngine {
    /// A 304 when the client's conditional headers (``HTTPCaching/conditionalHeaders(ifNoneMatch:ifModifiedSince:)``)
    /// get one from the source; `nil` when the client sent none, the
    /// source is not HTTP, S3, GCS or a local file, or it answered anything
    /// else (the body of a 200 is not read: the render loads the source as
    /// usual). A local file has no server to decide: its own validators
    /// are compared with the client's, as a static file server would.
    func sourceNotModified(_ source: URL, request: RequestHeaders, variesWithAccept: Bool, expires: Int?) async -> ImageServerReply? {
        let caching = configuration.caching
        let conditions = caching.conditionalHeaders(ifNoneMatch: request["if-none-match"], ifModifiedSince: request["if-modified-since"])
        let scheme = source.scheme?.lowercased() ?? ""
        guard !conditions.isEmpty, ["http", "https", "s3", "gs", "local"].contains(scheme) else { return nil }
        var probe = URLRequest(url: source)
        for (name, value) in conditions { probe.setValue(value, forHTTPHeaderField: name) }
        guard let loaded = try? await loader.load(probe), let response = loaded.response as? HTTPURLResponse else { return nil }
        let headers = SourceCacheHeaders(response)
        let unchanged = scheme == "local"
            ? caching.isNotModified(ifNoneMatch: probe.value(forHTTPHeaderField: "If-None-Match"),
                                    ifModifiedSince: probe.value(forHTTPHeaderField: "If-Modified-Since"),
                                    etag: headers.etag, lastModified: headers.lastModified)
            : response.statusCode == 304
        guard unchanged else { return nil }
        // The 304's own validators, as the source gave them.
        let reply = validatorHeaders(etag: headers.etag.flatMap { caching.etag(source: headers, bytesTag: $0) },
                                     lastModified: caching.lastModified(source: headers),
                                     cacheControl: caching.cacheControl(timeToLive: configuration.timeToLive, expires: expires, source: headers),
                                     variesWithAccept: variesWithAccept)
        return ImageServerReply(status: 304, headers: reply, body: Data(), outcome: "not_modified")
    }
}
#endif
