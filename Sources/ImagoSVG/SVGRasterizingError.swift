#if Server
#if canImport(CRsvg)
import ImagoSVGDrawing
#endif

/// Why ``SVGRasterizer`` or ``SVGRasterizerProcess`` made no image.
package enum SVGRasterizingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The document's size is over the pixel limit (or over cairo's 32,767
    /// pixels a side); nothing was allocated. The server answers `422 source_too_large`.
    case tooLarge(width: Int, height: Int, limit: Int)
    /// librsvg could not read the document.
    case couldNotLoad(String)
    /// librsvg or cairo could not draw it.
    case couldNotRender(String)
    /// This build has no librsvg (it is linked on Linux only).
    case unavailable
    /// The child process that draws the document failed or could not be
    /// run; the reason says how. The server answers `422`.
    case processFailed(SVGRasterizerFailure)

    package var description: String {
        switch self {
        case .tooLarge(let width, let height, let limit): "the SVG is \(width)x\(height), over the limit of \(limit) pixels"
        case .couldNotLoad(let message): "librsvg could not read the SVG: \(message)"
        case .couldNotRender(let message): "librsvg could not draw the SVG: \(message)"
        case .unavailable: "this build cannot rasterise SVG (librsvg is linked on Linux only)"
        case .processFailed(let failure): "the SVG rasterizer failed: \(failure)"
        }
    }

    #if canImport(CRsvg)
    /// The error for a failure of librsvg or cairo.
    init(_ failure: SVGDrawingFailure) {
        switch failure {
        case .tooLarge(let width, let height, let limit): self = .tooLarge(width: width, height: height, limit: limit)
        case .couldNotLoad(let message): self = .couldNotLoad(message)
        case .couldNotRender(let message), .badRequest(let message): self = .couldNotRender(message)
        case .outOfMemory(let message): self = .processFailed(SVGRasterizerFailure(.outOfMemory, message))
        }
    }
    #endif
}

/// How the SVG rasterizer's child process failed: the reason (the
/// `reason` dimension of the `imago_server_svg_rasterizer_failures`
/// counter) and what was seen.
package struct SVGRasterizerFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// Why the child gave no image.
    package enum Reason: String, Sendable, Hashable, CaseIterable {
        /// librsvg panicked (Rust's `panicked at` on its standard error).
        case panic
        /// The child ended on a signal or an exit status it does not send by itself (an abort, a crash).
        case crash
        /// The child ran out of its address space (`RLIMIT_AS`), or cairo of memory.
        case outOfMemory = "out_of_memory"
        /// The child used up its CPU time (`RLIMIT_CPU`).
        case cpuLimit = "cpu_limit"
        /// The child passed its wall-clock deadline and was killed.
        case timeout
        /// The caller was cancelled and the child killed.
        case cancelled
        /// The child answered something the protocol does not allow.
        case protocolError = "protocol"
        /// The executable is missing or could not be started.
        case unavailable
    }

    /// Why the child gave no image.
    package var reason: Reason
    /// What was seen: the signal or status, the start of the child's standard error, or the path that is missing.
    package var detail: String

    /// Creates a failure.
    package init(_ reason: Reason, _ detail: String) {
        self.reason = reason
        self.detail = detail
    }

    package var description: String { "\(reason.rawValue): \(detail)" }
}
#endif
