#if Server
import Foundation
import Imago
#if canImport(CRsvg)
import ImagoSVGDrawing
#endif

/// Draws an SVG document into an ``Imago/Image`` with librsvg and cairo,
/// in this process: RGBA, 8 bits a channel, straight (not premultiplied)
/// alpha. A panic or an abort inside librsvg ends the process: the image
/// server draws SVG sources in a child process instead
/// (``SVGRasterizerProcess``), with the same sizes and pixels.
///
/// The size is the document's own: its `width` and `height` in pixels
/// (at 96 dots per inch), else one of them and the `viewBox`'s aspect
/// ratio, else the `viewBox`'s size, else 300x150, as browsers size an
/// `<img>`. A size over ``maximumPixelCount`` (or over cairo's 32,767
/// pixels a side) is refused before anything is allocated.
///
/// Give it only documents ``SVGSanitizer`` returned. librsvg is also
/// handed the bytes with no base address, so that by itself it can load
/// no file or URL (only `data:` images).
///
/// ```swift
/// let image = try SVGRasterizer(maximumPixelCount: 50_000_000).image(from: try SVGSanitizer().sanitized(data))
/// ```
package struct SVGRasterizer: Sendable {
    /// The most pixels (width x height) an image may have.
    package var maximumPixelCount: Int
    /// Whether librsvg reads documents with libxml2's limits for huge
    /// documents off, as ``SVGRasterizerProcess/liftsXMLLimits`` says.
    package var liftsXMLLimits: Bool
    /// The size of a document that gives none, as in browsers.
    package static let defaultSize = (width: 300, height: 150)

    /// Creates a rasterizer with a pixel limit.
    package init(maximumPixelCount: Int = ImageDecodingOptions.defaultMaximumPixelCount, liftsXMLLimits: Bool = false) {
        self.maximumPixelCount = maximumPixelCount
        self.liftsXMLLimits = liftsXMLLimits
    }

    /// The document's size in pixels, as the type's summary says.
    ///
    /// - Throws: ``SVGRasterizingError/tooLarge(width:height:limit:)`` over
    ///   the limits, or when librsvg cannot read the document.
    package func size(of svg: Data) throws(SVGRasterizingError) -> (width: Int, height: Int) {
        #if canImport(CRsvg)
        do {
            return try Self.document(svg, liftsXMLLimits: liftsXMLLimits).size(maximumPixelCount: maximumPixelCount)
        } catch {
            throw SVGRasterizingError(error)
        }
        #else
        throw .unavailable
        #endif
    }

    /// The document drawn at its size, or, with a `thumbnail`, at the size
    /// the thumbnail's geometry scales it to and then cut as it says (the
    /// vector drawn small rather than a large bitmap resampled).
    ///
    /// - Throws: ``SVGRasterizingError``.
    package func image(from svg: Data, thumbnail: Thumbnail? = nil) throws(SVGRasterizingError) -> Image {
        #if canImport(CRsvg)
        do {
            let document = try Self.document(svg, liftsXMLLimits: liftsXMLLimits)
            let size = try document.size(maximumPixelCount: maximumPixelCount)
            return try Self.image(size: size, thumbnail: thumbnail) { target throws(SVGDrawingFailure) in
                try document.draw(size: size, into: target)
            }
        } catch {
            throw SVGRasterizingError(error)
        }
        #else
        throw .unavailable
        #endif
    }

    /// The image of a document whose size is `size`: drawn by `draw` at the
    /// size `thumbnail`'s geometry scales it to (or at its size), then cut
    /// as the geometry says. Shared with ``SVGRasterizerProcess``.
    static func image<Failure: Error>(
        size: (width: Int, height: Int), thumbnail: Thumbnail?,
        draw: ((width: Int, height: Int)) throws(Failure) -> [UInt8]
    ) throws(Failure) -> Image {
        guard let thumbnail else {
            return Image(width: size.width, height: size.height, pixelFormat: .rgba8, pixels: try draw(size))
        }
        let geometry = thumbnail.geometry(width: size.width, height: size.height)
        let target = (width: geometry.scaledWidth, height: geometry.scaledHeight)
        let drawn = Image(width: target.width, height: target.height, pixelFormat: .rgba8, pixels: try draw(target))
        return drawn.resized(to: geometry, filter: thumbnail.filter, linearLight: thumbnail.linearLight)
    }

    #if canImport(CRsvg)
    /// librsvg's document for `svg`.
    private static func document(_ svg: Data, liftsXMLLimits: Bool) throws(SVGDrawingFailure) -> SVGDrawingDocument {
        try svg.withUnsafeBytes { buffer in
            Result { () throws(SVGDrawingFailure) in try SVGDrawingDocument(buffer, liftsXMLLimits: liftsXMLLimits) }
        }.get()
    }
    #endif
}
#endif
