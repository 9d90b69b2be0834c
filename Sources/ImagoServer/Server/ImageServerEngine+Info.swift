#if Server
import Crypto
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Imago
import ImagoSVG
import ImagoCodecs
import Logging
import Metrics
import Tracing

/// `/info` descriptions and `raw` streams: answers that load a source without rendering it.
extension ImageServerEngine {
    /// Answers a `raw` path: the source's bytes streamed through unchanged
    /// as they arrive, through the guarded loader (the source policy on
    /// every redirect, the size limit), with no decode and no content
    /// check. The status comes from the source's headers and first chunk:
    /// a failure before them is answered as for images; a failure later
    /// (the size limit crossed) cuts the body short. The source's
    /// `Content-Type` is passed on only when it names an image, and the
    /// answer forbids sniffing and scripts, so a source cannot put a page
    /// on the server's origin.
    ///
    /// As imgproxy's stream handler: the client's `If-None-Match`,
    /// `If-Modified-Since`, `Range` and `Accept-Encoding` go to the source
    /// (nothing else of the client's but its cookies, with a
    /// ``ImageServerConfiguration/cookiePassthrough``), and the source's `ETag`,
    /// `Last-Modified` (each unless switched off), `Accept-Ranges`,
    /// `Content-Range` and status (a 206 or a 304) come back, with its `Content-Length` when its body is not
    /// compressed (the loader decompresses a compressed one, so neither its
    /// length nor its `Content-Encoding` would be true).
    func streamed(_ source: URL, request: RequestHeaders, disposition: ContentDisposition,
                  expires: Int?) async throws(ImageServerError) -> ImageServerReply {
        guard let lease = StreamLease(count: streams, limit: max(1, configuration.maximumConcurrentStreams)) else {
            throw ImageServerError(.saturated, "the server is busy; retry in a moment")
        }
        do {
            // The span covers the response's head; the body streams on after it.
            // Counted by `streams`, not in the image downloads' total.
            var outgoing = URLRequest(url: source)
            for name in Self.streamedRequestHeaders {
                if let value = request[name.lowercased()] { outgoing.setValue(value, forHTTPHeaderField: name) }
            }
            if let cookie = configuration.cookiePassthrough?.cookie(for: source, request: request) {
                outgoing.setValue(cookie, forHTTPHeaderField: "Cookie")
            }
            let loaded = try await withSpan(SpanName.sourceFetch) { _ in try await loader.withoutTotalLimit.load(outgoing) }
            guard let response = loaded.response else {
                throw ImageServerError(.sourceFailed, "the source sent no response")
            }
            let http = response as? HTTPURLResponse
            // The validators only when the server sends them (`--etag`, `--last-modified`), as imgproxy 3 did.
            let switchedOff = (configuration.caching.sendsETag ? [] : ["ETag"]) + (configuration.caching.sendsLastModified ? [] : ["Last-Modified"])
            let passed = Self.streamedResponseHeaders.filter { !switchedOff.contains($0) }.compactMap { name in
                http?.value(forHTTPHeaderField: name).map { (name: name, value: $0) }
            }
            let cacheControl = ("Cache-Control", configuration.caching.cacheControl(timeToLive: configuration.timeToLive, expires: expires,
                                                                                    source: SourceCacheHeaders(response)))
            // A local file has no server to answer 304: its validators are compared here.
            let unchangedFile = source.scheme?.lowercased() == "local" && http.map { response in
                let validators = SourceCacheHeaders(response)
                return configuration.caching.isNotModified(ifNoneMatch: request["if-none-match"], ifModifiedSince: request["if-modified-since"],
                                                           etag: validators.etag, lastModified: validators.lastModified)
            } == true
            if http?.statusCode == 304 || unchangedFile {
                return ImageServerReply(status: 304, headers: [cacheControl] + passed + canonicalLink(source), body: Data(), outcome: "not_modified")
            }
            let checked = try CheckedResponse(response, for: source, accepting: .anything, partialContent: outgoing.value(forHTTPHeaderField: "Range") != nil)
            var chunks = loaded.body.makeAsyncIterator()
            let first = try await chunks.next() ?? Data()
            let type = checked.contentType.flatMap(Self.imageType(_:))
            let encoded = !["", "identity"].contains(http?.value(forHTTPHeaderField: "Content-Encoding")?.lowercased() ?? "")
            let length = encoded ? nil : http?.value(forHTTPHeaderField: "Content-Length").flatMap(Int.init)
            let headers: [(name: String, value: String)] = [
                cacheControl,
                ("Content-Type", type ?? "application/octet-stream"),
                ("Content-Disposition", disposition.value(extension: type.map(Self.fileExtension(forImageType:)) ?? "")),
                ("X-Content-Type-Options", "nosniff"),
                ("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox"),
            ] + passed + (length.map { [("Content-Length", "\($0)")] } ?? []) + canonicalLink(source)
            return ImageServerReply(status: http?.statusCode ?? 200, headers: headers, body: first, outcome: "raw",
                                    stream: StreamedBody(rest: loaded.body, lease: lease))
        } catch {
            let failure = ImageServerError(answering: error)
            metrics.failed(failure)
            throw failure
        }
    }

    /// The client's headers a `raw` answer passes to the source, as imgproxy's stream handler.
    static let streamedRequestHeaders = ["If-None-Match", "If-Modified-Since", "Range", "Accept-Encoding"]
    /// The source's headers a `raw` answer passes on (its `Content-Type`
    /// only when it names an image, and its length apart).
    static let streamedResponseHeaders = ["ETag", "Last-Modified", "Accept-Ranges", "Content-Range"]

    /// `image/SUBTYPE` from a `Content-Type` (parameters dropped, lower-cased), or `nil` for anything else.
    static func imageType(_ contentType: String) -> String? {
        let type = contentType.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        guard type.hasPrefix("image/"), type.count > 6, type.count <= 64,
              type.dropFirst(6).allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }) else { return nil }
        return type
    }

    /// The file extension for an image type Imago knows (`jpg` for JPEG,
    /// `svg` for SVG...); empty for any other, as imgproxy names no
    /// extension for a type it does not know.
    static func fileExtension(forImageType type: String) -> String {
        switch type {
        case "image/jpeg", "image/pjpeg", "image/jpg": "jpg"
        case "image/svg+xml": "svg"
        case "image/x-icon", "image/vnd.microsoft.icon": "ico"
        case "image/heif": "heic"
        default: ImageFormat.allCases.first { $0.mimeType == type }?.fileExtension ?? ""
        }
    }

    /// Answers `/info`: the source's description as JSON, worked out once
    /// for requests that arrive together, in one of the decode slots.
    func describe(_ source: URL, expires: Int?, ifNoneMatch: String?) async throws(ImageServerError) -> ImageServerReply {
        let ticket: JobRegistry<URL, Data>.Ticket
        do {
            ticket = try descriptions.enter(source, subscription: JobSubscription(priority: .normal)) { [self] job in
                try await description(of: source, job: job)
            }
        } catch {
            throw ImageServerError(.saturated, "the server is busy; retry in a moment")
        }
        let result = await Task { [descriptions] in
            do {
                return Result<Data, ImageServerError>.success(try await descriptions.value(of: ticket))
            } catch {
                return .failure(error as? ImageServerError ?? ImageServerError(answering: error))
            }
        }.value
        let body = try result.get()
        let etag = RenderedImage.entityTag(of: body)
        var headers: [(name: String, value: String)] = [
            ("Cache-Control", configuration.caching.cacheControl(timeToLive: configuration.timeToLive, expires: expires, source: SourceCacheHeaders())),
            ("ETag", etag),
        ]
        if EntityTag.matches(ifNoneMatch, etag: etag) {
            return ImageServerReply(status: 304, headers: headers, body: Data(), outcome: ticket.joined ? "joined" : "info")
        }
        headers.append(("Content-Type", "application/json"))
        return ImageServerReply(status: 200, headers: headers, body: body, outcome: ticket.joined ? "joined" : "info")
    }

    /// Loads the source through the guard (status, content type and size
    /// checked as for images) and describes it.
    func description(of source: URL, job: SharedJob<Data>) async throws(ImageServerError) -> Data {
        do {
            let (data, response) = try await withSpan(SpanName.sourceFetch) { _ in try await loader.data(for: URLRequest(url: source)) }
            let checked = try ResponseHandler<Data>(accepting: .images) { $0 }.handle(data, response: response, for: source)
            let (workQueue, lifted) = (pipeline.configuration.workQueue, configuration.liftsPNGChunkLimits)
            return try await job.perform(on: workQueue) { try ImageInfoReport(describing: checked, liftsPNGChunkLimits: lifted).json() }
        } catch {
            let failure = ImageServerError(answering: error)
            metrics.failed(failure)
            throw failure
        }
    }
}
#endif
