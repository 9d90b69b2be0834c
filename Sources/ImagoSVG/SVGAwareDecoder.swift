#if Server
import Foundation
import Imago

/// The server's decoder: bytes that look like an SVG document
/// (``SVGSanitizer/looksLikeSVG(_:)``, whatever their `Content-Type`) are
/// sanitised and drawn in a child process (``SVGRasterizerProcess``, never
/// in the server's own); all others go to the wrapped decoder.
///
/// Its failures are ``Imago/ImageDecodingError``s, so the server answers
/// them as it does other sources': a document over the pixel limit is
/// ``Imago/ImageDecodingError/Code/tooManyPixels`` and one over libxml2's
/// limits for huge documents ``Imago/ImageDecodingError/Code/tooComplex``
/// (both `422 source_too_large`),
/// a refused or unreadable one, or one the child failed on (a panic, its
/// memory or time run out), ``Imago/ImageDecodingError/Code/couldNotOpen``
/// (`422 undecodable`), each with the SVG error as its underlying error.
package struct SVGAwareDecoder: ImageDecoding {
    /// The decoder for everything that is not SVG.
    package let wrapped: any ImageDecoding
    /// The child process SVG documents are drawn in.
    package let rasterizer: SVGRasterizerProcess
    /// The sanitizer's limits (its embedded pixel limit is each decode's pixel limit).
    package let sanitizer: SVGSanitizer

    /// Wraps `decoder`; SVG documents are sanitised with `sanitizer`'s limits and drawn by `rasterizer`.
    package init(wrapping decoder: any ImageDecoding, rasterizer: SVGRasterizerProcess, sanitizer: SVGSanitizer = SVGSanitizer()) {
        wrapped = decoder
        self.rasterizer = rasterizer
        self.sanitizer = sanitizer
    }

    /// ``sanitizer`` with `pixels` as its embedded pixel limit.
    package func sanitizer(embeddingAtMost pixels: Int) -> SVGSanitizer {
        var limited = sanitizer
        limited.maximumEmbeddedPixelCount = pixels
        return limited
    }

    package func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        guard SVGSanitizer.looksLikeSVG(data) else { return try wrapped.decode(data, options: options) }
        return try rasterized(data, options: options, cancellation: nil)
    }

    /// An SVG document sanitised and drawn in the child, within the
    /// options' pixel limit and at their thumbnail's size; the child is
    /// killed when `cancellation` is cancelled. Waits on the calling thread.
    package func rasterized(_ data: Data, options: ImageDecodingOptions, cancellation: SVGRasterizerCancellation?) throws(ImageDecodingError) -> Image {
        do {
            let sanitized = try sanitizer(embeddingAtMost: options.maximumPixelCount).sanitized(data)
            var process = rasterizer
            process.maximumPixelCount = options.maximumPixelCount
            return try process.image(from: sanitized, thumbnail: options.thumbnail, cancellation: cancellation)
        } catch {
            throw Self.decodingError(error)
        }
    }

    /// Frame by frame through the wrapped decoder (one frame at a time);
    /// an SVG document is one frame.
    package func decodeFrames(_ data: Data, options: ImageDecodingOptions, maximumFrames: Int?, _ body: (Image) throws -> Bool) throws {
        guard SVGSanitizer.looksLikeSVG(data) else {
            return try wrapped.decodeFrames(data, options: options, maximumFrames: maximumFrames, body)
        }
        _ = try body(decode(data, options: options))
    }

    /// The decoding error the server answers for a sanitizer's or a
    /// rasterizer's error, as the type's summary says.
    package static func decodingError(_ error: any Error) -> ImageDecodingError {
        if case SVGRasterizingError.tooLarge = error {
            return ImageDecodingError(.tooManyPixels, message: "\(error)", underlying: error)
        }
        if case SVGSanitizingError.overXMLLimits = error {
            return ImageDecodingError(.tooComplex, message: "\(error)", underlying: error)
        }
        if case SVGRasterizingError.couldNotRender = error {
            return ImageDecodingError(.couldNotProduceImage, message: "\(error)", underlying: error)
        }
        return ImageDecodingError(.couldNotOpen, message: "\(error)", underlying: error)
    }
}
#endif
