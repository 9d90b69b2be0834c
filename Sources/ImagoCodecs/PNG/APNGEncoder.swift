import Foundation
import Imago

/// Writes animated PNG (APNG): each frame is filtered and compressed as
/// ``PNGEncoder`` does it, as it is added, and only its compressed data
/// (and the frame before's pixels) is kept. Frames are written in the
/// first frame's pixel format; after the first, each is only the
/// rectangle that changed since the frame before, which replaces those
/// pixels (no blending), so still parts cost nothing. The first frame is
/// also the still image that viewers without APNG support show.
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
        /// The frame before's pixels, rows packed: what the canvas shows
        /// when the next frame is drawn.
        private var previous: [UInt8] = []

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
            let pixels = Self.packedRows(of: still)
            // After the first frame, the rectangle that changed (a pixel of it when none did).
            let region = frameCount == 0 ? Region(x: 0, y: 0, width: width, height: height)
                : Self.changedRegion(from: previous, to: pixels, width: width, height: height, bytesPerPixel: format.bytesPerPixel)
                    ?? Region(x: 0, y: 0, width: 1, height: 1)
            previous = pixels
            let part = region.width == width && region.height == height
                ? still : Self.cropped(pixels, to: region, width: width, pixelFormat: format)
            let encoded = try PNGEncoder.imageData(of: part, compression: compression, allowsPalette: false)
            let (ihdr, data) = (encoded.header, encoded.data)
            if frameCount == 0 { header = ihdr }
            // fcTL: the region, its delay in milliseconds, no disposal, no blending (it replaces those pixels).
            let milliseconds = UInt16(clamping: max(1, Int((duration * 1000).rounded())))
            var control = Self.bigEndian(sequence) + Self.bigEndian(UInt32(region.width)) + Self.bigEndian(UInt32(region.height))
            control += Self.bigEndian(UInt32(region.x)) + Self.bigEndian(UInt32(region.y))
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
            var png = PNGEncoder.signature
            APNG.append(chunk: Array("IHDR".utf8), header, to: &png)
            APNG.append(chunk: Array("acTL".utf8), Self.bigEndian(UInt32(frameCount)) + Self.bigEndian(UInt32(clamping: max(0, loopCount))), to: &png)
            png += chunks
            APNG.append(chunk: Array("IEND".utf8), [], to: &png)
            return Data(png)
        }

        private static func bigEndian(_ value: UInt32) -> [UInt8] { PNGEncoder.bigEndian(value) }

        /// A rectangle of the canvas.
        struct Region: Equatable {
            var x: Int, y: Int, width: Int, height: Int
        }

        /// The image's pixels with no padding after each row.
        static func packedRows(of image: Image) -> [UInt8] {
            let rowBytes = image.width * image.pixelFormat.bytesPerPixel
            if image.bytesPerRow == rowBytes { return image.pixels }
            var packed = [UInt8]()
            packed.reserveCapacity(rowBytes * image.height)
            for y in 0..<image.height {
                packed += image.pixels[(y * image.bytesPerRow)..<(y * image.bytesPerRow + rowBytes)]
            }
            return packed
        }

        /// The smallest rectangle holding every pixel that differs between
        /// two frames of packed rows; `nil` when none does.
        static func changedRegion(from old: [UInt8], to new: [UInt8], width: Int, height: Int, bytesPerPixel: Int) -> Region? {
            let rowBytes = width * bytesPerPixel
            return old.withUnsafeBufferPointer { old in
                new.withUnsafeBufferPointer { new in
                    func rowDiffers(_ y: Int) -> Bool {
                        memcmp(old.baseAddress! + y * rowBytes, new.baseAddress! + y * rowBytes, rowBytes) != 0
                    }
                    guard let top = (0..<height).first(where: rowDiffers) else { return nil }
                    let bottom = (top..<height).last(where: rowDiffers)!
                    var left = width, right = -1
                    for y in top...bottom {
                        let row = y * rowBytes
                        func pixelDiffers(_ x: Int) -> Bool {
                            memcmp(old.baseAddress! + row + x * bytesPerPixel, new.baseAddress! + row + x * bytesPerPixel, bytesPerPixel) != 0
                        }
                        if let first = (0..<left).first(where: pixelDiffers) { left = first }
                        if let last = ((right + 1)..<width).reversed().first(where: pixelDiffers) { right = last }
                    }
                    // A row that differs has a pixel that differs, so left <= right.
                    return Region(x: left, y: top, width: right - left + 1, height: bottom - top + 1)
                }
            }
        }

        /// The region of a frame of packed rows, as an image.
        static func cropped(_ pixels: [UInt8], to region: Region, width: Int, pixelFormat: PixelFormat) -> Image {
            let bytesPerPixel = pixelFormat.bytesPerPixel
            var part = [UInt8]()
            part.reserveCapacity(region.width * region.height * bytesPerPixel)
            for y in region.y..<(region.y + region.height) {
                let start = (y * width + region.x) * bytesPerPixel
                part += pixels[start..<(start + region.width * bytesPerPixel)]
            }
            return Image(width: region.width, height: region.height, pixelFormat: pixelFormat, pixels: part)
        }
    }
}
