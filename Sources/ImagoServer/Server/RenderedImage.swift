#if Server
import Crypto
import Foundation
import Imago
import ImagoSVG

/// One encoded output and what it took to make it.
struct RenderedImage: Sendable {
    /// The encoded bytes.
    var data: Data
    /// Their format; `nil` for a source's sanitised SVG document.
    var format: ImageFormat?
    /// The strong entity tag, quoted.
    var etag: String
    /// Where the source came from (`memory`, `disk`, `network`).
    var sourceLayer: String
    /// The source's size in bytes, when it was read for this output.
    var sourceByteCount: Int?
    /// Where the pipeline's time went: waiting, loading, decoding.
    var sourceMetrics: ImageTaskMetrics
    /// Seconds spent processing and encoding for this output.
    var renderingTime: Double
    /// What the source's response said about caching: the answer's
    /// `ETag`, `Last-Modified` and passed-on `Cache-Control` come from it.
    var sourceCacheHeaders = SourceCacheHeaders()
    /// The source's width and height as its header gave them, when it was read for this output.
    var sourceSize: (width: Int, height: Int)?

    /// The `Content-Type`: imgproxy's, `image/heif` for HEIC.
    var mimeType: String { format.map(Self.contentType(of:)) ?? "image/svg+xml" }

    /// The `Content-Type` of `format`, as imgproxy names it.
    static func contentType(of format: ImageFormat) -> String {
        format == .heic ? "image/heif" : format.mimeType
    }

    /// An output read back from a result store: no source was loaded for it.
    /// The ``sourceLayer`` of an output read from the result store.
    static let storeLayer = "store"

    init(stored result: StoredResult) {
        self.init(data: result.data, format: ImageFormat.allCases.first { [$0.mimeType, Self.contentType(of: $0)].contains(result.contentType) },
                  etag: result.etag,
                  sourceLayer: Self.storeLayer, sourceByteCount: nil, sourceMetrics: ImageTaskMetrics(), renderingTime: 0)
        sourceCacheHeaders = result.sourceCacheHeaders
    }

    /// Creates an output.
    init(data: Data, format: ImageFormat?, etag: String, sourceLayer: String, sourceByteCount: Int?,
         sourceMetrics: ImageTaskMetrics, renderingTime: Double) {
        (self.data, self.format, self.etag, self.sourceLayer) = (data, format, etag, sourceLayer)
        (self.sourceByteCount, self.sourceMetrics, self.renderingTime) = (sourceByteCount, sourceMetrics, renderingTime)
    }

    /// Creates an output made here, its entity tag that of its bytes.
    init(data: Data, format: ImageFormat?, sourceLayer: String, sourceByteCount: Int?, sourceMetrics: ImageTaskMetrics,
         renderingTime: Double) {
        self.init(data: data, format: format, etag: Self.entityTag(of: data), sourceLayer: sourceLayer,
                  sourceByteCount: sourceByteCount, sourceMetrics: sourceMetrics, renderingTime: renderingTime)
    }

    /// The strong entity tag of `data`: `sha256-` and its SHA-256 in hex,
    /// quoted. Equal bytes have one tag on every replica, and the prefix
    /// tells the server's own tags from a source's.
    static func entityTag(of data: Data) -> String {
        "\"" + hashTagPrefix + SHA256.hash(data: data).lowercaseHex + "\""
    }

    /// What the server's own tags start with, inside the quotes.
    static let hashTagPrefix = "sha256-"
    /// The file extension for `Content-Disposition`.
    var fileExtension: String { format?.fileExtension ?? "svg" }
    /// Headers an SVG document is sent with, so that a browser that opens
    /// it runs nothing and loads nothing (as for `raw` answers); none for images.
    var documentHeaders: [(name: String, value: String)] {
        guard format == nil else { return [] }
        return [
            ("X-Content-Type-Options", "nosniff"),
            ("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox"),
        ]
    }

    /// The `Server-Timing` header: wait, load, decode and render, in milliseconds.
    var serverTiming: String {
        func ms(_ seconds: Double?) -> String { String(format: "%.1f", (seconds ?? 0) * 1000) }
        return "wait;dur=\(ms(sourceMetrics.waitingDuration)), load;dur=\(ms(sourceMetrics.loadingDuration)), "
            + "decode;dur=\(ms(sourceMetrics.decodingDuration)), render;dur=\(ms(renderingTime))"
    }
}
#endif
