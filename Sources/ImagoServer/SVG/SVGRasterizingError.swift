#if Server
/// Why ``SVGRasterizer`` made no image.
public enum SVGRasterizingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The document's size is over the pixel limit (or over cairo's 32,767
    /// pixels a side); nothing was allocated. The server answers `413`.
    case tooLarge(width: Int, height: Int, limit: Int)
    /// librsvg could not read the document.
    case couldNotLoad(String)
    /// librsvg or cairo could not draw it.
    case couldNotRender(String)
    /// This build has no librsvg (it is linked on Linux only).
    case unavailable

    public var description: String {
        switch self {
        case .tooLarge(let width, let height, let limit): "the SVG is \(width)x\(height), over the limit of \(limit) pixels"
        case .couldNotLoad(let message): "librsvg could not read the SVG: \(message)"
        case .couldNotRender(let message): "librsvg could not draw the SVG: \(message)"
        case .unavailable: "this build cannot rasterise SVG (librsvg is linked on Linux only)"
        }
    }
}
#endif
