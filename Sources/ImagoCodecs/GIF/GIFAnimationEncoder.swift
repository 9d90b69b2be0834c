import CGif
import Foundation
import Imago

/// Writes animated GIF with giflib, one frame at a time: each frame gets
/// its own palette of up to 255 colours (median cut, no dithering) and a
/// transparent index for pixels with alpha below 128; frames cover the
/// whole canvas and are cleared before the next (disposal "background").
///
/// ```swift
/// let writer = try GIFAnimationEncoder().makeWriter(width: 320, height: 240, loopCount: 0)
/// try writer.add(frame, duration: 0.1)
/// let data = try writer.finish()
/// ```
public struct GIFAnimationEncoder: AnimationEncoding {
    /// Always ``ImageFormat/gif``.
    public var format: ImageFormat { .gif }

    /// The largest side GIF can hold: 65,535 pixels.
    public static let maximumDimension = 65_535

    /// Creates an encoder.
    public init() {}

    /// Starts an animation; a `loopCount` of 1 writes no loop extension (play once), as GIF files do.
    ///
    /// - Throws: ``ImageEncodingError`` (`unsupportedImage`) beyond ``maximumDimension``.
    public func makeWriter(width: Int, height: Int, loopCount: Int) throws -> any AnimationWriter {
        guard (1...Self.maximumDimension).contains(width), (1...Self.maximumDimension).contains(height) else {
            throw ImageEncodingError(.unsupportedImage, format: .gif,
                                     message: "\(width)x\(height) is outside GIF's 1 to \(Self.maximumDimension) pixels per side")
        }
        return try Writer(width: width, height: height, loopCount: loopCount)
    }

    /// One animation in progress: giflib's file, writing into ``Output``.
    final class Writer: AnimationWriter {
        /// Where giflib's bytes go.
        final class Output { var data = Data() }

        private let output = Output()
        private var file: UnsafeMutablePointer<GifFileType>?
        private let width: Int, height: Int
        private var frameCount = 0

        init(width: Int, height: Int, loopCount: Int) throws {
            (self.width, self.height) = (width, height)
            var error: Int32 = 0
            file = EGifOpen(Unmanaged.passUnretained(output).toOpaque(), { file, bytes, count in
                guard let file, let bytes, count > 0 else { return 0 }
                let output = Unmanaged<Output>.fromOpaque(file.pointee.UserData).takeUnretainedValue()
                output.data.append(bytes, count: Int(count))
                return count
            }, &error)
            guard let file else { throw Self.failure(error, "cannot start a GIF") }
            EGifSetGifVersion(file, true)
            try check(EGifPutScreenDesc(file, Int32(width), Int32(height), 8, 0, nil), "the screen descriptor")
            if loopCount != 1 {
                let count = UInt16(clamping: max(0, loopCount))
                try check(EGifPutExtensionLeader(file, APPLICATION_EXT_FUNC_CODE), "the loop extension")
                try Array("NETSCAPE2.0".utf8).withUnsafeBufferPointer {
                    try check(EGifPutExtensionBlock(file, 11, $0.baseAddress), "the loop extension")
                }
                try [UInt8(1), UInt8(count & 0xFF), UInt8(count >> 8)].withUnsafeBufferPointer {
                    try check(EGifPutExtensionBlock(file, 3, $0.baseAddress), "the loop extension")
                }
                try check(EGifPutExtensionTrailer(file), "the loop extension")
            }
        }

        deinit {
            if let file { EGifCloseFile(file, nil) }
        }

        func add(_ frame: Image, duration: TimeInterval) throws {
            guard let file else { throw ImageEncodingError(.encodingFailed, format: .gif, message: "the animation is finished") }
            guard frame.width == width, frame.height == height else {
                throw ImageEncodingError(.unsupportedImage, format: .gif,
                                         message: "a \(frame.width)x\(frame.height) frame in a \(width)x\(height) animation")
            }
            let rgba = frame.pixelFormat == .rgba8 ? frame : frame.converted(to: .rgba8)
            let pixels = rgba.frames[0].pixels
            let palette = Palette(rgba: pixels, width: width, height: height, bytesPerRow: rgba.bytesPerRow)

            // Browsers show delays of 0 or 1 centisecond as 10: 2 at least.
            var control = GraphicsControlBlock(DisposalMode: DISPOSE_BACKGROUND, UserInputFlag: false,
                                               DelayTime: Int32(clamping: max(2, Int((duration * 100).rounded()))),
                                               TransparentColor: Int32(Palette.transparentIndex))
            var extensionBytes = [UInt8](repeating: 0, count: 4)
            let length = EGifGCBToExtension(&control, &extensionBytes)
            try check(EGifPutExtension(file, GRAPHICS_EXT_FUNC_CODE, Int32(length), extensionBytes), "frame \(frameCount)'s control block")

            var entries = palette.colors.map { GifColorType(Red: $0.red, Green: $0.green, Blue: $0.blue) }
            entries += Array(repeating: GifColorType(Red: 0, Green: 0, Blue: 0), count: 256 - entries.count)
            guard let map = GifMakeMapObject(256, entries) else { throw Self.failure(E_GIF_ERR_NOT_ENOUGH_MEM, "frame \(frameCount)'s palette") }
            defer { GifFreeMapObject(map) }
            try check(EGifPutImageDesc(file, 0, 0, Int32(width), Int32(height), false, map), "frame \(frameCount)'s descriptor")
            var line = [UInt8](repeating: 0, count: width)
            for row in 0..<height {
                var at = row * rgba.bytesPerRow
                for column in 0..<width {
                    line[column] = pixels[at + 3] < 128 ? Palette.transparentIndex : palette.index(pixels[at], pixels[at + 1], pixels[at + 2])
                    at += 4
                }
                try check(EGifPutLine(file, &line, Int32(width)), "frame \(frameCount), row \(row)")
            }
            frameCount += 1
        }

        func finish() throws -> Data {
            guard frameCount > 0 else { throw ImageEncodingError(.unsupportedImage, format: .gif, message: "an animation needs a frame") }
            guard let file else { return output.data }
            self.file = nil
            var error: Int32 = 0
            guard EGifCloseFile(file, &error) == GIF_OK else { throw Self.failure(error, "cannot end the GIF") }
            return output.data
        }

        private func check(_ result: Int32, _ what: String) throws {
            guard result == GIF_OK else { throw Self.failure(file?.pointee.Error ?? 0, "cannot write \(what)") }
        }

        private static func failure(_ code: Int32, _ message: String) -> ImageEncodingError {
            let failure = CodecError.giflib(code)
            return ImageEncodingError(.encodingFailed, format: .gif, message: "\(message): \(failure)", underlying: failure)
        }
    }
}
