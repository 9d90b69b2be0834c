import Foundation

/// Writes animations frame by frame: each frame is encoded as it is added,
/// so memory holds the encoder's own state and the output, never every
/// frame's pixels.
///
/// ```swift
/// let writer = try WebPAnimationEncoder(quality: 80).makeWriter(width: 64, height: 64, loopCount: 0)
/// try decoder.decodeFrames(data, options: options, maximumFrames: 100) { frame in
///     try writer.add(frame.resized(width: 64, height: 64), duration: frame.frames[0].duration ?? 0.1)
///     return true
/// }
/// let animation = try writer.finish()
/// ```
public protocol AnimationEncoding: Sendable {
    /// The format this encoder produces.
    var format: ImageFormat { get }

    /// Starts an animation of `width` x `height` frames that plays
    /// `loopCount` times (0: forever).
    ///
    /// - Throws: ``ImageEncodingError`` (`unsupportedImage`) for a size the format cannot hold.
    func makeWriter(width: Int, height: Int, loopCount: Int) throws -> any AnimationWriter
}

/// One animation being written; used from one thread at a time, once.
public protocol AnimationWriter: AnyObject {
    /// Encodes the first frame of `frame` (the writer's size, any pixel
    /// format), shown for `duration` seconds.
    ///
    /// - Throws: ``ImageEncodingError``.
    func add(_ frame: Image, duration: TimeInterval) throws

    /// Ends the animation and returns its bytes; at least one frame must
    /// have been added.
    ///
    /// - Throws: ``ImageEncodingError``.
    func finish() throws -> Data
}

extension AnimationEncoding {
    /// Encodes every frame of `animation` with its duration (0.1 s for a
    /// frame without one) and the image's loop count; a still image
    /// becomes a one-frame animation.
    ///
    /// ```swift
    /// let image = try await client.image(from: url)   // an animated GIF
    /// let apng = try APNGEncoder().encode(image)
    /// ```
    ///
    /// - Throws: ``ImageEncodingError``.
    public func encode(_ animation: Image) throws -> Data {
        let writer = try makeWriter(width: animation.width, height: animation.height, loopCount: animation.loopCount)
        for frame in animation.frames {
            var still = Image(width: animation.width, height: animation.height, pixelFormat: animation.pixelFormat,
                              bytesPerRow: animation.bytesPerRow, pixels: frame.pixels)
            still.colorProfile = animation.colorProfile
            try writer.add(still, duration: frame.duration ?? 0.1)
        }
        return try writer.finish()
    }
}
