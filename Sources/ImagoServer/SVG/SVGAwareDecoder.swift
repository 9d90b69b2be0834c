#if Server
import Foundation
import Imago

/// The server's decoder: bytes that look like an SVG document
/// (``SVGSanitizer/looksLikeSVG(_:)``, whatever their `Content-Type`) are
/// sanitised and rasterised; all others go to the wrapped decoder.
///
/// Its failures are ``Imago/ImageDecodingError``s, so the server answers
/// them as it does other sources': a document over the pixel limit is
/// ``Imago/ImageDecodingError/Code/tooManyPixels`` (`413 source_too_large`),
/// a refused or unreadable one ``Imago/ImageDecodingError/Code/couldNotOpen``
/// (`422 undecodable`), each with the SVG error as its underlying error.
struct SVGAwareDecoder: ImageDecoding {
    /// The decoder for everything that is not SVG.
    let wrapped: any ImageDecoding

    /// Wraps `decoder`.
    init(wrapping decoder: any ImageDecoding) {
        wrapped = decoder
    }

    func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        guard SVGSanitizer.looksLikeSVG(data) else { return try wrapped.decode(data, options: options) }
        do {
            let sanitized = try SVGSanitizer(maximumEmbeddedPixelCount: options.maximumPixelCount).sanitized(data)
            return try SVGRasterizer(maximumPixelCount: options.maximumPixelCount).image(from: sanitized, thumbnail: options.thumbnail)
        } catch {
            throw Self.decodingError(error)
        }
    }

    /// Frame by frame through the wrapped decoder (one frame at a time);
    /// an SVG document is one frame.
    func decodeFrames(_ data: Data, options: ImageDecodingOptions, maximumFrames: Int?, _ body: (Image) throws -> Bool) throws {
        guard SVGSanitizer.looksLikeSVG(data) else {
            return try wrapped.decodeFrames(data, options: options, maximumFrames: maximumFrames, body)
        }
        _ = try body(decode(data, options: options))
    }

    /// The decoding error the server answers for a sanitizer's or a
    /// rasterizer's error, as the type's summary says.
    static func decodingError(_ error: any Error) -> ImageDecodingError {
        if case SVGRasterizingError.tooLarge = error {
            return ImageDecodingError(.tooManyPixels, message: "\(error)", underlying: error)
        }
        if case SVGRasterizingError.couldNotRender = error {
            return ImageDecodingError(.couldNotProduceImage, message: "\(error)", underlying: error)
        }
        return ImageDecodingError(.couldNotOpen, message: "\(error)", underlying: error)
    }
}
#endif
