import Foundation
import Imago

/// Writes animated PNG (APNG): each frame is filtered and compressed as
/// ``PNGEncoder`` does it, as it is added, and only its compressed data is kept. Every
/// frame covers the canvas and replaces the one before (no blending), in
/// the first frame's pixel format; the first frame is also the still
/// image that viewers without APNG support show.
///
/// ```swift
/// let writer = try APNGEncoder().makeWriter(width: 320, height: 240, loopCount: 0)
/// try writer.add(frame, duration: 0.1)
/// let data = try writer.finish()
/// ```
public struct APNGEncoder: AnimationEncoding {
    /// Always ``ImageFormat/png``.
    public var format: ImageFormat { .png }
    /// How hard each frame is compressed. Default: ``PNGEncoder/Compression/default``.
    public var compression: PNGEncoder.Compression

    /// Creates an encoder.
    public init(compression: PNGEncoder.Compression = .default) {
        self.compression = compression
    }

    /// Starts an animation.
    ///
    /// - Throws: ``ImageEncodingError`` (`unsupportedImage`) for a side
    ///   outside 1 to 2^31 - 1.
    public func makeWriter(width: Int, height: Int, loopCount: Int) throws -> any AnimationWriter {
        guard (1...Int(Int32.max)).contains(width), (1...Int(Int32.max)).contains(height) else {
            throw ImageEncodingError(.unsupportedImage, format: .png, message: "\(width)x\(height) is not a PNG size")
        }
        return Writer(width: width, height: height, loopCount: loopCount, compression: compression)
    }

    /// One animation in progress: the header, and the frames' chunks so far.
    final class Writer: AnimationWriter {
        private let width: Int, height: Int, loopCount: Int
        private let compression: PNGEncoder.Compression
        /// The first frame's pixel format, which every frame is written in.
        private var pixelFormat: PixelFormat?
        private var header: [UInt8] = []
        /// Every chunk after `acTL`: `fcTL`, `IDAT` or `fdAT`.
        private var chunks: [UInt8] = []
        private var frameCount = 0
        private var sequence: UInt32 = 0

        init(width: Int, height: Int, loopCount: Int, compression: PNGEncoder.Compression) {
            (self.width, self.height, self.loopCount, self.compression) = (width, height, loopCount, compression)
        }

        func add(_ frame: Image, duration: TimeInterval) throws {
            guard frame.width == width, frame.height == height else {
                throw ImageEncodingError(.unsupportedImage, format: .png,
                                         message: "a \(frame.width)x\(frame.height) frame in a \(width)x\(height) animation")
            }
            let format = pixelFormat ?? frame.pixelFormat
            pixelFormat = format
            // The first frame's pixels, compressed; no profile or other chunk.
            let still = frame.pixelFormat == format ? frame : frame.converted(to: format)
            let encoded = try PNGEncoder.imageData(of: still, compression: compression, allowsPalette: false)
            let (ihdr, data) = (encoded.header, encoded.data)
            if frameCount == 0 { header = ihdr }
            // fcTL: the frame over the whole canvas, its delay in milliseconds, no disposal, no blending.
            let milliseconds = UInt16(clamping: max(1, Int((duration * 1000).rounded())))
            var control = Self.bigEndian(sequence) + Self.bigEndian(UInt32(width)) + Self.bigEndian(UInt32(height))
            control += Self.bigEndian(0) + Self.bigEndian(0)
            control += [UInt8(milliseconds >> 8), UInt8(milliseconds & 0xFF), 0x03, 0xE8, 0, 0]
            APNG.append(chunk: Array("fcTL".utf8), control, to: &chunks)
            sequence += 1
            if frameCount == 0 {
                APNG.append(chunk: Array("IDAT".utf8), data, to: &chunks)
            } else {
                APNG.append(chunk: Array("fdAT".utf8), Self.bigEndian(sequence) + data, to: &chunks)
                sequence += 1
            }
            frameCount += 1
        }

        func finish() throws -> Data {
            guard frameCount > 0 else { throw ImageEncodingError(.unsupportedImage, format: .png, message: "an animation needs a frame") }
            var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            APNG.append(chunk: Array("IHDR".utf8), header, to: &png)
            APNG.append(chunk: Array("acTL".utf8), Self.bigEndian(UInt32(frameCount)) + Self.bigEndian(UInt32(clamping: max(0, loopCount))), to: &png)
            png += chunks
            APNG.append(chunk: Array("IEND".utf8), [], to: &png)
            return Data(png)
        }

        private static func bigEndian(_ value: UInt32) -> [UInt8] { PNGEncoder.bigEndian(value) }
    }
}
