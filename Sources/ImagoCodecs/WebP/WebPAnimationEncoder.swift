import CWebP
import Foundation
import Imago

/// Writes animated WebP with libwebp's animation encoder (libwebpmux):
/// each frame is encoded as it is added, lossy or lossless, and libwebp
/// keeps only the previous canvas and the encoded frames.
///
/// ```swift
/// let writer = try WebPAnimationEncoder(quality: 80).makeWriter(width: 320, height: 240, loopCount: 0)
/// try writer.add(frame, duration: 0.1)
/// let data = try writer.finish()
/// ```
public struct WebPAnimationEncoder: AnimationEncoding {
    /// Always ``ImageFormat/webp``.
    public var format: ImageFormat { .webp }
    /// The lossy quality, 0 (smallest) to 100 (best); clamped, NaN counts
    /// as ``WebPEncoder/defaultQuality``. Ignored when ``lossless`` is set.
    public var quality: Float
    /// Whether frames are encoded losslessly.
    public var lossless: Bool
    /// The preset each lossy frame's encoding starts from, as
    /// ``WebPEncoder/preset``. Default: ``WebPEncoder/Preset/default``.
    /// imgproxy's `IMGPROXY_WEBP_PRESET`.
    public var preset: WebPEncoder.Preset
    /// libwebp's `method` for each frame, 0 (fastest) to 6 (smallest),
    /// clamped to ``WebPEncoder/effortRange``, as ``WebPEncoder/effort``.
    /// Default: ``WebPEncoder/defaultEffort``. imgproxy's `IMGPROXY_WEBP_EFFORT`.
    public var effort: Int

    /// Creates an encoder.
    public init(quality: Float = Float(WebPEncoder.defaultQuality), lossless: Bool = false,
                preset: WebPEncoder.Preset = .default, effort: Int = WebPEncoder.defaultEffort) {
        self.quality = quality
        self.lossless = lossless
        self.preset = preset
        self.effort = effort
    }

    /// Starts an animation.
    ///
    /// - Throws: ``ImageEncodingError`` (`unsupportedImage`) beyond
    ///   ``WebPEncoder/maximumDimension``, (`encodingFailed`) when libwebp
    ///   cannot start one.
    public func makeWriter(width: Int, height: Int, loopCount: Int) throws -> any AnimationWriter {
        guard (1...WebPEncoder.maximumDimension).contains(width), (1...WebPEncoder.maximumDimension).contains(height) else {
            throw ImageEncodingError(.unsupportedImage, format: .webp,
                                     message: "\(width)x\(height) is outside WebP's 1 to \(WebPEncoder.maximumDimension) pixels per side")
        }
        return try Writer(width: width, height: height, loopCount: loopCount, quality: WebPEncoder.clampedQuality(quality),
                          lossless: lossless, preset: preset, effort: effort)
    }

    /// One animation in progress: libwebp's encoder and the time so far.
    final class Writer: AnimationWriter {
        private let encoder: OpaquePointer
        private var config = WebPConfig()
        private let width: Int, height: Int
        /// The start of the next frame, in milliseconds.
        private var timestamp = 0
        private var frameCount = 0

        init(width: Int, height: Int, loopCount: Int, quality: Float, lossless: Bool, preset: WebPEncoder.Preset, effort: Int) throws {
            var options = WebPAnimEncoderOptions()
            guard WebPAnimEncoderOptionsInit(&options) != 0, WebPConfigPreset(&config, preset.libwebp, quality) != 0 else {
                throw Self.failure("cannot set up libwebp")
            }
            options.anim_params.loop_count = Int32(clamping: max(0, loopCount))
            options.allow_mixed = 0
            config.lossless = lossless ? 1 : 0
            config.method = WebPEncoder.clampedEffort(effort)
            guard let encoder = WebPAnimEncoderNew(Int32(width), Int32(height), &options) else {
                throw Self.failure("libwebp cannot start a \(width)x\(height) animation")
            }
            self.encoder = encoder
            (self.width, self.height) = (width, height)
        }

        deinit { WebPAnimEncoderDelete(encoder) }

        func add(_ frame: Image, duration: TimeInterval) throws {
            guard frame.width == width, frame.height == height else {
                throw ImageEncodingError(.unsupportedImage, format: .webp,
                                         message: "a \(frame.width)x\(frame.height) frame in a \(width)x\(height) animation")
            }
            let rgba = frame.pixelFormat == .rgba8 ? frame : frame.converted(to: .rgba8)
            var picture = WebPPicture()
            guard WebPPictureInit(&picture) != 0 else { throw Self.failure("cannot set up a frame") }
            defer { WebPPictureFree(&picture) }
            picture.width = Int32(width)
            picture.height = Int32(height)
            picture.use_argb = 1
            let imported = rgba.frames[0].pixels.withUnsafeBufferPointer { buffer in
                WebPPictureImportRGBA(&picture, buffer.baseAddress, Int32(rgba.bytesPerRow))
            }
            guard imported != 0 else { throw Self.failure("libwebp cannot take frame \(frameCount)") }
            guard WebPAnimEncoderAdd(encoder, &picture, Int32(clamping: timestamp), &config) != 0 else {
                throw Self.failure("libwebp cannot encode frame \(frameCount): \(lastError)")
            }
            // A duration of 0 would make the frame vanish: 1 ms at least.
            timestamp += max(1, Int((duration * 1000).rounded()))
            frameCount += 1
        }

        func finish() throws -> Data {
            guard frameCount > 0 else { throw ImageEncodingError(.unsupportedImage, format: .webp, message: "an animation needs a frame") }
            guard WebPAnimEncoderAdd(encoder, nil, Int32(clamping: timestamp), nil) != 0 else {
                throw Self.failure("libwebp cannot end the animation")
            }
            var data = WebPData()
            defer { WebPDataClear(&data) }
            guard WebPAnimEncoderAssemble(encoder, &data) != 0, let bytes = data.bytes else {
                throw Self.failure("libwebp cannot assemble the animation: \(lastError)")
            }
            return Data(bytes: bytes, count: data.size)
        }

        /// libwebp's message for the last failure.
        private var lastError: String {
            let message: UnsafePointer<CChar>? = WebPAnimEncoderGetError(encoder)
            return message.map { String(cString: $0) } ?? "unknown"
        }

        private static func failure(_ message: String) -> ImageEncodingError {
            let failure = CodecError(.encodingFailed)
            return ImageEncodingError(.encodingFailed, format: .webp, message: message, underlying: failure)
        }
    }
}
