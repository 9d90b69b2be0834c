#if Server
import Foundation
import Imago

/// One encoded output and what it took to make it.
struct RenderedImage: Sendable {
    /// The encoded bytes.
    var data: Data
    /// Their format.
    var format: ProcessingOptions.OutputFormat
    /// The strong entity tag, quoted.
    var etag: String
    /// Where the source came from (`memory`, `disk`, `network`).
    var sourceLayer: String
    /// The source's size in bytes, when it was read for this output.
    var sourceByteCount: Int?
    /// Seconds spent: loading and decoding the source, then processing and encoding.
    var loadingTime: Double
    var processingTime: Double
}
#endif
