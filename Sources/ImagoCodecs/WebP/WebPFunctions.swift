import CWebP
import Foundation
import Imago

extension CodecFunctions where State == WebPState {
    /// The production table for WebP, over libwebp and libwebpdemux.
    ///
    /// `open` reads the features from the header with `WebPGetFeatures`
    /// (no pixels are decoded). For an animation it also runs the demuxer to
    /// learn the canvas size, the frame count and the loop count, and
    /// rejects a file whose frame rectangles do not all lie inside the canvas.
    /// It reads the `ICCP` chunk (the colour profile) and the orientation in
    /// the `EXIF` chunk.
    ///
    /// `makeImage` decodes a still image straight into the returned buffer:
    /// `.rgba8` when the bitstream has alpha, otherwise `.rgb8`. An animation
    /// is decoded with `WebPAnimDecoder` into composited `.rgba8` canvases
    /// (not premultiplied), each frame carrying its duration and the image
    /// the file's loop count (`0` = forever). With a frame index, the frames
    /// before it are decoded to composite it, and a one-frame image is
    /// returned with that frame's duration and the file's loop count.
    /// With a ``ImageDecodingOptions/thumbnail``, a still image is scaled by
    /// libwebp while decoding, to the thumbnail's
    /// ``Thumbnail/scaledSize(width:height:)``; an animation's frames are
    /// composited at full size by libwebp on its one canvas and each is
    /// downscaled to that size as soon as it is drawn, as GIF's are. Every
    /// image is turned upright as the EXIF orientation says.
    ///
    /// Errors are ``CodecError`` values with `library == "libwebp"`.
    ///
    /// ```swift
    /// let decoder = CodecDecoder(format: .webp, functions: .webp)
    /// let image = try decoder.decode(data)
    /// ```
    public static var webp: CodecFunctions<WebPState> {
        CodecFunctions(
            open: { data, _ in
                let state = try WebPState(reading: data)
                var opened = OpenedImage(width: state.width, height: state.height, frameCount: state.frameCount, state: state,
                                         colorProfile: state.metadata.colorProfile)
                opened.orientation = state.metadata.orientation
                opened.exif = state.metadata.exifRange.map { data[data.startIndex + $0.lowerBound..<data.startIndex + $0.upperBound] }
                return opened
            },
            makeImage: { opened, frameIndex, options in
                try opened.state.decode(frameIndex: frameIndex, thumbnail: options.thumbnail).applying(opened.state.metadata.orientation)
            },
            frames: { opened, last, options, body in
                // Only animations have a frame step worth calling (a still image is one frame).
                guard let animation = opened.state.animation else {
                    _ = try body(opened.state.decode(frameIndex: nil, thumbnail: nil).applying(opened.state.metadata.orientation))
                    return
                }
                let orientation = opened.state.metadata.orientation
                let thumbnail = options.thumbnail?.forStoredPixels(turnedBy: orientation)
                try WebPAnimation.forEachFrame(opened.state, animation: animation, through: last, thumbnail: thumbnail) {
                    try body($0.applying(orientation))
                }
            }
        )
    }
}

/// What the WebP table's `open` learned about a file (size, alpha, and the
/// demuxer's facts about an animation), kept with the data for its `makeImage`.
///
/// Only `CodecFunctions.webp` makes one, so its `makeImage` always
/// receives a file its `open` has read.
public struct WebPState: Sendable {
    /// The facts about an animation that only the demuxer knows.
    struct Animation: Sendable {
        /// The number of frames.
        var frameCount: Int
        /// How many times the animation plays; `0` means forever.
        var loopCount: Int
    }

    /// The encoded file.
    let data: Data
    /// The image (or canvas) width.
    let width: Int
    /// The image (or canvas) height.
    let height: Int
    /// Whether the bitstream declares alpha.
    let hasAlpha: Bool
    /// Set for an animated file.
    let animation: Animation?
    /// The ICC profile and EXIF orientation of the file's chunks.
    let metadata: WebPMetadata

    /// The number of frames; 1 for a still image.
    var frameCount: Int { animation?.frameCount ?? 1 }

    /// Reads the header of `data` without decoding pixels.
    init(reading data: Data) throws {
        var features = WebPBitstreamFeatures()
        let status = data.withUnsafeBytes { raw in
            WebPGetFeatures(raw.bindMemory(to: UInt8.self).baseAddress, raw.count, &features)
        }
        try WebPFailure.check(status)
        self.data = data
        self.hasAlpha = features.has_alpha != 0
        self.metadata = WebPMetadata(reading: data)
        if features.has_animation != 0 {
            let canvas = try WebPAnimation.inspect(data)
            self.width = canvas.width
            self.height = canvas.height
            self.animation = canvas.animation
        } else {
            self.width = Int(features.width)
            self.height = Int(features.height)
            self.animation = nil
        }
    }

    /// The stored pixels (not yet turned upright): the animation's frames,
    /// or the still image, scaled by libwebp while decoding when the
    /// thumbnail (as the stored pixels see it) is smaller.
    func decode(frameIndex: Int?, thumbnail: Thumbnail?) throws -> Image {
        let stored = thumbnail?.forStoredPixels(turnedBy: metadata.orientation)
        if let animation { return try WebPAnimation.decode(self, animation: animation, frameIndex: frameIndex, thumbnail: stored) }
        if let stored {
            let size = stored.scaledSize(width: width, height: height)
            if size.width < width || size.height < height { return try decodeStill(scaledTo: size) }
        }
        return try decodeStill()
    }

    /// The size an animation's frames are drawn at: the canvas, or the
    /// `thumbnail`'s scaled size (as the stored pixels see it) within it.
    func outputSize(_ thumbnail: Thumbnail?) -> (width: Int, height: Int) {
        thumbnail?.downscaledSize(width: width, height: height) ?? (width, height)
    }

    /// Decodes a still image at `size`, smaller than the image, with libwebp's
    /// own rescaler (area averaging in YUV, before colour conversion), straight
    /// into the returned buffer.
    func decodeStill(scaledTo size: (width: Int, height: Int)) throws -> Image {
        let pixelFormat: PixelFormat = hasAlpha ? .rgba8 : .rgb8
        let bytesPerRow = size.width * pixelFormat.bytesPerPixel
        let byteCount = bytesPerRow * size.height
        var config = WebPDecoderConfig()
        guard WebPInitDecoderConfigInternal(&config, WEBP_DECODER_ABI_VERSION) != 0,
              let width = Int32(exactly: size.width), let height = Int32(exactly: size.height),
              let stride = Int32(exactly: bytesPerRow) else {
            throw CodecError(.stillDecodingFailed)
        }
        config.options.use_scaling = 1
        // At half size or less, the in-loop deblocking filter's work is
        // averaged away by the rescaler: skip it (about 6% of the decode).
        if size.width * 2 <= self.width && size.height * 2 <= self.height {
            config.options.bypass_filtering = 1
        }
        config.options.scaled_width = width
        config.options.scaled_height = height
        config.output.colorspace = hasAlpha ? MODE_RGBA : MODE_RGB
        config.output.is_external_memory = 1
        let pixels = try [UInt8](pixelCapacity: byteCount) { buffer, count in
            config.output.u.RGBA.rgba = buffer.baseAddress
            config.output.u.RGBA.stride = stride
            config.output.u.RGBA.size = byteCount
            let status = data.withUnsafeBytes { raw in
                let input = raw.bindMemory(to: UInt8.self)
                return WebPDecode(input.baseAddress, input.count, &config)
            }
            guard status == VP8_STATUS_OK else { throw CodecError(.stillDecodingFailed) }
            count = byteCount
        }
        return Image(width: size.width, height: size.height, pixelFormat: pixelFormat, bytesPerRow: bytesPerRow, pixels: pixels)
    }

    /// Decodes a still image at full size, straight into the returned buffer.
    func decodeStill() throws -> Image {
        let pixelFormat: PixelFormat = hasAlpha ? .rgba8 : .rgb8
        let bytesPerRow = width * pixelFormat.bytesPerPixel
        let size = bytesPerRow * height
        guard let stride = Int32(exactly: bytesPerRow) else {
            throw CodecError(.rowTooLong(width: width))
        }
        let pixels = try [UInt8](pixelCapacity: size) { buffer, count in
            let output = data.withUnsafeBytes { raw in
                let input = raw.bindMemory(to: UInt8.self)
                return hasAlpha
                    ? WebPDecodeRGBAInto(input.baseAddress, input.count, buffer.baseAddress, size, stride)
                    : WebPDecodeRGBInto(input.baseAddress, input.count, buffer.baseAddress, size, stride)
            }
            guard output != nil else { throw CodecError(.stillDecodingFailed) }
            count = size
        }
        return Image(width: width, height: height, pixelFormat: pixelFormat, bytesPerRow: bytesPerRow, pixels: pixels)
    }
}
