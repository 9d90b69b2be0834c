#if Server
import Foundation
import Imago

/// The limits one render checks its source against: the server's
/// (``ImageServerConfiguration``), or the path's own security options
/// where it sets them (`max_src_resolution`, `max_src_file_size`,
/// `max_animation_frames`, `max_animation_frame_resolution`), as imgproxy's
/// security checker decides them.
///
/// A path's values replace the server's, up or down: paths may set them
/// only when the server allows security options, and then only signed
/// paths reach a render. Two bounds stay whatever a path says: the
/// loader's byte limit (a larger `max_src_file_size` cannot raise it) and
/// the memory budget every render reserves from.
struct SourceLimits: Sendable, Equatable {
    /// The most pixels of a still, or of all an animation's decoded frames.
    var pixels: Int
    /// The most bytes of the source, below the loader's own limit; `nil`: the loader's.
    var bytes: Int?
    /// The most frames of an animation processed; 1 renders animations as stills.
    var animationFrames: Int
    /// When set, an animation is checked frame by frame against it instead of in total.
    var framePixels: Int?

    init(_ configuration: ImageServerConfiguration, options: ProcessingOptions) {
        pixels = options.maximumSourcePixels ?? configuration.maximumSourcePixels
        bytes = options.maximumSourceBytes
        animationFrames = options.maximumAnimationFrames ?? configuration.maximumAnimationFrames
        let frame = options.maximumAnimationFramePixels ?? configuration.maximumAnimationFramePixels ?? 0
        framePixels = frame > 0 ? frame : nil
    }

    /// Whether animated sources stay animated.
    var animates: Bool { animationFrames > 1 }

    /// The decoder's pixel limit for a source decoded with `frames`
    /// frames: per frame times the frames when ``framePixels`` is set and
    /// more than one frame is decoded, else ``pixels``.
    func decodedPixels(frames: Int) -> Int {
        guard let framePixels, frames > 1 else { return max(1, pixels) }
        let (total, overflow) = framePixels.multipliedReportingOverflow(by: frames)
        return overflow ? .max : total
    }

    /// Throws ``ImageServerError/Code/sourceTooLarge`` when `data` has more bytes than ``bytes``.
    func checkBytes(of data: Data) throws(ImageServerError) {
        guard let bytes, data.count > bytes else { return }
        var failure = ImageServerError(.sourceTooLarge, "the source is too large: \(data.count) bytes, above the path's limit of \(bytes)")
        failure.failedLoading = true
        throw failure
    }
}
#endif
