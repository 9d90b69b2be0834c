#if canImport(CRsvg)
import CRsvg

/// A document read by librsvg: its size and its drawing as straight RGBA
/// bytes. Shared by the server's in-process ``SVGRasterizer`` and the
/// `imago-svg-rasterizer` child process, so both size and draw alike.
/// Not thread-safe: one thread uses a document.
package final class SVGDrawingDocument {
    /// cairo's largest image side.
    package static let maximumSide = 32_767
    /// The resolution physical units (`in`, `cm`, `pt`...) are read at: CSS's.
    package static let dotsPerInch = 96.0
    /// The size of a document that gives none, as in browsers.
    package static let defaultSize = (width: 300, height: 150)

    private let handle: OpaquePointer

    /// Reads `svg` with no base file or URL, with libxml2's limits for
    /// huge documents on, or, when `liftsXMLLimits`, off
    /// (`RSVG_HANDLE_FLAG_UNLIMITED`: documents and attribute values over
    /// 10 MB, names over 50,000 bytes, nesting deeper than 256). librsvg's
    /// own limits hold either way (a million elements, half a million
    /// references resolved).
    package init(_ svg: UnsafeRawBufferPointer, liftsXMLLimits: Bool = false) throws(SVGDrawingFailure) {
        var error: UnsafeMutablePointer<GError>?
        let loaded: OpaquePointer?
        if liftsXMLLimits {
            // Only the stream constructor takes flags; the stream reads `svg` in place, within this call.
            let stream = g_memory_input_stream_new_from_data(svg.baseAddress, svg.count, nil)
            defer { stream.map { g_object_unref(UnsafeMutableRawPointer($0)) } }
            loaded = stream.flatMap { rsvg_handle_new_from_stream_sync($0, nil, RSVG_HANDLE_FLAG_UNLIMITED, nil, &error) }
        } else {
            loaded = rsvg_handle_new_from_data(svg.bindMemory(to: UInt8.self).baseAddress, svg.count, &error)
        }
        guard let handle = loaded else {
            throw .couldNotLoad(Self.consume(error))
        }
        rsvg_handle_set_dpi(handle, Self.dotsPerInch)
        self.handle = handle
    }

    deinit { g_object_unref(UnsafeMutableRawPointer(handle)) }

    /// The document's size in pixels: its `width` and `height` (at 96 dots
    /// per inch), else one of them and the `viewBox`'s aspect ratio, else
    /// the `viewBox`'s size, else 300x150; refused over `maximumPixelCount`
    /// or cairo's side.
    package func size(maximumPixelCount: Int) throws(SVGDrawingFailure) -> (width: Int, height: Int) {
        let size = intrinsicSize()
        let width = size.width.rounded(.up), height = size.height.rounded(.up)
        let clamp = { (side: Double) in side < Double(Int32.max) ? Int(side) : Int(Int32.max) }
        guard width * height <= Double(maximumPixelCount), width <= Double(Self.maximumSide), height <= Double(Self.maximumSide) else {
            throw .tooLarge(width: clamp(width), height: clamp(height), limit: maximumPixelCount)
        }
        return (max(1, Int(width)), max(1, Int(height)))
    }

    /// The document's size in pixels, not yet rounded.
    private func intrinsicSize() -> (width: Double, height: Double) {
        var width = 0.0, height = 0.0
        if rsvg_handle_get_intrinsic_size_in_pixels(handle, &width, &height) != 0, Self.usable(width), Self.usable(height) {
            return (width, height)
        }
        var hasWidth: Int32 = 0, hasHeight: Int32 = 0, hasViewBox: Int32 = 0
        var widthLength = RsvgLength(), heightLength = RsvgLength(), viewBox = RsvgRectangle()
        rsvg_handle_get_intrinsic_dimensions(handle, &hasWidth, &widthLength, &hasHeight, &heightLength, &hasViewBox, &viewBox)
        let givenWidth = hasWidth != 0 ? Self.pixels(widthLength) : nil
        let givenHeight = hasHeight != 0 ? Self.pixels(heightLength) : nil
        if hasViewBox != 0, Self.usable(viewBox.width), Self.usable(viewBox.height) {
            switch (givenWidth, givenHeight) {
            case let (width?, height?): return (width, height)
            case let (width?, nil): return (width, width * viewBox.height / viewBox.width)
            case let (nil, height?): return (height * viewBox.width / viewBox.height, height)
            case (nil, nil): return (viewBox.width, viewBox.height)
            }
        }
        return (givenWidth ?? Double(Self.defaultSize.width), givenHeight ?? Double(Self.defaultSize.height))
    }

    /// A length in pixels, or `nil` for a percentage or a value that is not a positive finite number.
    private static func pixels(_ length: RsvgLength) -> Double? {
        let perInch = dotsPerInch
        let scale: Double? = switch length.unit {
        case RSVG_UNIT_PX: 1
        case RSVG_UNIT_IN: perInch
        case RSVG_UNIT_CM: perInch / 2.54
        case RSVG_UNIT_MM: perInch / 25.4
        case RSVG_UNIT_PT: perInch / 72
        case RSVG_UNIT_PC: perInch / 6
        case RSVG_UNIT_EM: 16
        case RSVG_UNIT_EX: 8
        default: nil
        }
        guard let scale, usable(length.length * scale) else { return nil }
        return length.length * scale
    }

    /// Whether a size is a positive finite number.
    private static func usable(_ value: Double) -> Bool { value.isFinite && value > 0 }

    /// The document, whose size is `size`, drawn stretched to `target`:
    /// straight (not premultiplied) RGBA, 8 bits a channel, rows top down.
    package func draw(size: (width: Int, height: Int), into target: (width: Int, height: Int)) throws(SVGDrawingFailure) -> [UInt8] {
        guard let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(target.width), Int32(target.height)) else {
            throw .outOfMemory("cairo could not make a surface")
        }
        defer { cairo_surface_destroy(surface) }
        guard cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS, let context = cairo_create(surface) else {
            throw .outOfMemory("cairo could not make a \(target.width)x\(target.height) surface")
        }
        defer { cairo_destroy(context) }
        cairo_scale(context, Double(target.width) / Double(size.width), Double(target.height) / Double(size.height))
        var viewport = RsvgRectangle(x: 0, y: 0, width: Double(size.width), height: Double(size.height))
        var error: UnsafeMutablePointer<GError>?
        guard rsvg_handle_render_document(handle, context, &viewport, &error) != 0 else { throw .couldNotRender(Self.consume(error)) }
        cairo_surface_flush(surface)
        guard let data = cairo_image_surface_get_data(surface) else { throw .couldNotRender("cairo kept no pixels") }
        return Self.straightRGBA(data, stride: Int(cairo_image_surface_get_stride(surface)), width: target.width, height: target.height)
    }

    /// cairo's premultiplied ARGB, one native-endian 32-bit word a pixel,
    /// as straight RGBA bytes.
    private static func straightRGBA(_ data: UnsafeMutablePointer<UInt8>, stride: Int, width: Int, height: Int) -> [UInt8] {
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        pixels.withUnsafeMutableBufferPointer { output in
            for y in 0..<height {
                let row = UnsafeRawPointer(data + y * stride)
                for x in 0..<width {
                    let word = row.loadUnaligned(fromByteOffset: x * 4, as: UInt32.self)
                    let alpha = word >> 24
                    guard alpha > 0 else { continue }
                    var red = (word >> 16) & 0xFF, green = (word >> 8) & 0xFF, blue = word & 0xFF
                    if alpha < 255 {
                        red = min(255, (red * 255 + alpha / 2) / alpha)
                        green = min(255, (green * 255 + alpha / 2) / alpha)
                        blue = min(255, (blue * 255 + alpha / 2) / alpha)
                    }
                    let offset = (y * width + x) * 4
                    output[offset] = UInt8(red)
                    output[offset + 1] = UInt8(green)
                    output[offset + 2] = UInt8(blue)
                    output[offset + 3] = UInt8(alpha)
                }
            }
        }
        return pixels
    }

    /// A GError's message, and the error freed.
    private static func consume(_ error: UnsafeMutablePointer<GError>?) -> String {
        guard let error else { return "no reason given" }
        defer { g_error_free(error) }
        return error.pointee.message.map { String(cString: $0) } ?? "no reason given"
    }
}
#endif
