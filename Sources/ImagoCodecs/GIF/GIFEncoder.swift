import Foundation
import Imago

/// Encodes the first frame of an ``Image`` as a still GIF with giflib: up
/// to 255 colours chosen for the image (median cut, no dithering), pixels
/// with alpha below 128 transparent. For animations, see
/// ``GIFAnimationEncoder``.
///
/// ```swift
/// let data = try GIFEncoder().encode(image)
/// ```
public struct GIFEncoder: ImageEncoding {
    /// Always ``ImageFormat/gif``.
    public var format: ImageFormat { .gif }

    /// Creates an encoder.
    public init() {}

    /// Encodes the first frame of `image`.
    ///
    /// - Throws: ``ImageEncodingError``: `unsupportedImage` beyond
    ///   ``GIFAnimationEncoder/maximumDimension``, `encodingFailed` when giflib fails.
    public func encode(_ image: Image) throws -> Data {
        let writer = try GIFAnimationEncoder().makeWriter(width: image.width, height: image.height, loopCount: 1)
        try writer.add(image, duration: 0)
        return try writer.finish()
    }
}
