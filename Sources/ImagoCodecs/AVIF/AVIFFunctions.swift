import CAvif
import Foundation
import Imago

extension CodecFunctions where State == AVIFState {
    /// The production table for AVIF, over libavif with dav1d (one thread
    /// per decode: callers decode images in parallel).
    ///
    /// `open` parses the container (no AV1 data is decoded) and reads the
    /// size as displayed (after the `clap` crop and the `irot`/`imir` turn),
    /// alpha, the frame count of an image sequence, and the colour profile:
    /// the ICC profile, or one made from the CICP colour primaries and
    /// transfer curve (the `nclx` box, else the AV1 sequence header): BT.709
    /// or unspecified primaries with the sRGB or BT.709 curve count as sRGB;
    /// PQ and HLG are kept as stored. libavif is told to refuse more pixels
    /// than ``ImageDecodingOptions/maximumPixelCount`` while parsing.
    ///
    /// `makeImage` decodes to `.rgb8`, or `.rgba8` with alpha (not
    /// premultiplied); 10- and 12-bit images are reduced to 8 bits. The
    /// file's crop, rotation and mirror are applied; an EXIF orientation is
    /// ignored, as the format requires. An image sequence (animated AVIF)
    /// gives every frame with its duration, looping forever (libavif 0.11
    /// reads no repetition count); with a frame index, the frames up to it
    /// are decoded (AV1 frames depend on earlier ones). With
    /// ``ImageDecodingOptions/thumbnail`` set, a still image's smallest
    /// thumbnail item (`thmb`) that covers the thumbnail's size (both sides,
    /// as displayed) is decoded instead of the primary image, as for HEIC
    /// (``CodecFunctions/heif``): libavif does not expose thumbnail items, so
    /// libheif finds and decodes the item (its AV1 decoder is dav1d too);
    /// a file libheif cannot read falls back to the primary image. Otherwise
    /// there is no scaled decoding: ``CodecDecoder`` resizes to a thumbnail
    /// afterwards.
    ///
    /// Errors are ``CodecError`` values with `library == "libavif"`.
    ///
    /// ```swift
    /// let decoder = CodecDecoder(format: .avif, functions: .avif)
    /// let image = try decoder.decode(data)
    /// ```
    public static var avif: CodecFunctions<AVIFState> {
        CodecFunctions(
            open: { data, options in
                // Before libavif parses: it makes a decoder for every tile.
                let tiles = ISOBMFFGrid.tileCount(in: data)
                try CodecDecoder.checkTiles(tiles, options: options, format: .avif)
                let state = try AVIFState(reading: data, options: options)
                var opened = OpenedImage(width: state.width, height: state.height, frameCount: state.frameCount, state: state,
                                         colorProfile: state.colorProfile)
                opened.tileCount = tiles
                opened.exif = state.exif
                return opened
            },
            makeImage: { opened, frameIndex, options in
                try opened.state.decode(frameIndex: frameIndex, options: options)
            },
            frames: { opened, last, options, body in
                try opened.state.forEachFrame(through: last, options: options, body)
            }
        )
    }
}

/// What the AVIF table's `open` learned about a file, kept with the data
/// for its `makeImage`.
///
/// Only `CodecFunctions.avif` makes one, so its `makeImage` always receives
/// a file its `open` has read.
public struct AVIFState: Sendable {
    /// The encoded file.
    let data: Data
    /// The displayed width (after the crop and the turn).
    let width: Int
    /// The displayed height (after the crop and the turn).
    let height: Int
    /// Whether the image has alpha.
    let hasAlpha: Bool
    /// The number of frames: 1, or the length of an image sequence.
    let frameCount: Int
    /// The ICC profile, or the one the CICP values describe; `nil` for sRGB.
    let colorProfile: ColorProfile?
    /// The Exif payload, as a TIFF structure.
    let exif: Data?
    /// The crop, rotation and mirror the file asks for.
    let transform: Transform

    /// The `clap`, `irot` and `imir` properties, applied in that order (MIAF).
    struct Transform: Sendable {
        /// The part of the coded image to keep; `nil` for all of it.
        var crop: (x: Int, y: Int, width: Int, height: Int)?
        /// Quarter turns anticlockwise (0...3).
        var quarterTurns: Int
        /// `imir`: 0 exchanges top and bottom, 1 left and right; `nil` for none.
        var mirror: Int?

        /// Whether the turn swaps width and height.
        var swapsDimensions: Bool { quarterTurns % 2 == 1 }
    }

    /// Parses `data` without decoding AV1 data.
    init(reading data: Data, options: ImageDecodingOptions) throws {
        let facts = try Self.withDecoder(data, options: options) { decoder in
            let image = decoder.pointee.image.pointee
            let transform = Self.transform(of: image)
            let storedWidth = transform.crop?.width ?? Int(image.width), storedHeight = transform.crop?.height ?? Int(image.height)
            return (width: transform.swapsDimensions ? storedHeight : storedWidth,
                    height: transform.swapsDimensions ? storedWidth : storedHeight,
                    hasAlpha: decoder.pointee.alphaPresent != 0, frames: Int(decoder.pointee.imageCount),
                    profile: Self.colorProfile(of: image), transform: transform, exif: Self.exif(of: image))
        }
        self.data = data
        (width, height, hasAlpha, frameCount, colorProfile, transform, exif) = facts
    }

    /// The image's Exif payload as a TIFF structure (after the 4-byte
    /// offset some versions of libavif leave in front); `nil` when there is
    /// none or it is larger than ``Imago/ImageMetadata/maximumExifBytes``.
    private static func exif(of image: avifImage) -> Data? {
        guard image.exif.size > 0, image.exif.size <= ImageMetadata.maximumExifBytes + 4, let bytes = image.exif.data else { return nil }
        let payload = Data(bytes: bytes, count: image.exif.size)
        if payload.starts(with: [0x49, 0x49]) || payload.starts(with: [0x4D, 0x4D]) { return payload }
        guard payload.count > 4 else { return nil }
        let offset = payload.prefix(4).reduce(0) { $0 << 8 | Int($1) }
        return offset < payload.count - 4 ? payload.dropFirst(4 + offset) : nil
    }

    /// Decodes every frame, or the frames up to `frameIndex` keeping that one;
    /// for a still image and a thumbnail, a thumbnail item that covers it.
    func decode(frameIndex: Int?, options: ImageDecodingOptions) throws -> Image {
        if frameCount == 1, (frameIndex ?? 0) == 0,
           let item = HEIFState.thumbnailItemImage(of: data, width: width, height: height,
                                                   pixelFormat: hasAlpha ? .rgba8 : .rgb8, options: options) {
            return item
        }
        var frames: [ImageFrame] = []
        try walk(through: frameIndex ?? frameCount - 1, options: options) { index, frame in
            if frameIndex == nil || index == frameIndex { frames.append(try frame()) }
            return true
        }
        return Image(width: width, height: height, pixelFormat: hasAlpha ? .rgba8 : .rgb8, frames: frames, loopCount: frameCount > 1 ? 0 : 1)
    }

    /// Decodes frames 0...`last` of a sequence and hands each to `body` as
    /// a one-frame image until `body` returns `false`.
    func forEachFrame(through last: Int, options: ImageDecodingOptions, _ body: (Image) throws -> Bool) throws {
        try walk(through: last, options: options) { _, frame in
            try body(Image(width: width, height: height, pixelFormat: hasAlpha ? .rgba8 : .rgb8, frames: [try frame()],
                           loopCount: frameCount > 1 ? 0 : 1))
        }
    }

    /// Steps libavif through frames 0...`last`, handing each index to
    /// `emit` with a function that converts the frame to RGB(A), upright,
    /// until `emit` returns `false`.
    private func walk(through last: Int, options: ImageDecodingOptions,
                      _ emit: (Int, () throws -> ImageFrame) throws -> Bool) throws {
        let pixelFormat: PixelFormat = hasAlpha ? .rgba8 : .rgb8
        try Self.withDecoder(data, options: options) { decoder in
            for index in 0...last {
                try AVIFFailure.check(avifDecoderNextImage(decoder), .nextImage)
                let keepsGoing = try emit(index) {
                    let image = decoder.pointee.image!
                    let stored = try Self.rgb(of: image, pixelFormat: pixelFormat)
                    let upright = transformed(stored)
                    guard upright.width == width, upright.height == height else {
                        throw CodecError.libavif(.unexpectedImage(width: width, height: height))
                    }
                    let duration: TimeInterval? = frameCount > 1 ? decoder.pointee.imageTiming.duration : nil
                    return ImageFrame(pixels: upright.pixels, duration: duration)
                }
                guard keepsGoing else { return }
            }
        }
    }

    /// The decoded frame converted to 8-bit RGB or RGBA, as stored (before the transform).
    private static func rgb(of image: UnsafeMutablePointer<avifImage>, pixelFormat: PixelFormat) throws -> Image {
        let width = Int(image.pointee.width), height = Int(image.pointee.height)
        let bytesPerRow = width * pixelFormat.bytesPerPixel
        guard let rowBytes = UInt32(exactly: bytesPerRow) else { throw CodecError.libavif(.unexpectedImage(width: width, height: height)) }
        var rgb = avifRGBImage()
        avifRGBImageSetDefaults(&rgb, image)
        rgb.format = pixelFormat == .rgba8 ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB
        rgb.depth = 8
        rgb.rowBytes = rowBytes
        rgb.alphaPremultiplied = 0
        let pixels = try [UInt8](pixelCapacity: bytesPerRow * height) { buffer, count in
            rgb.pixels = buffer.baseAddress
            try AVIFFailure.check(avifImageYUVToRGB(image, &rgb), .yuvToRGB)
            count = bytesPerRow * height
        }
        return Image(width: width, height: height, pixelFormat: pixelFormat, bytesPerRow: bytesPerRow, pixels: pixels)
    }

    /// `image` cropped, turned and mirrored as the file says.
    private func transformed(_ image: Image) -> Image {
        var result = image
        if let crop = transform.crop { result = result.cropped(x: crop.x, y: crop.y, width: crop.width, height: crop.height) }
        switch transform.quarterTurns {
        case 1: result = result.applying(.left)    // a quarter turn anticlockwise
        case 2: result = result.applying(.down)
        case 3: result = result.applying(.right)   // three anticlockwise: one clockwise
        default: break
        }
        switch transform.mirror {
        case 0?: result = result.applying(.downMirrored)   // top and bottom exchanged
        case 1?: result = result.applying(.upMirrored)     // left and right exchanged
        default: break
        }
        return result
    }

    /// Runs `body` with a decoder that has parsed `data` (libavif reads the bytes in place).
    private static func withDecoder<Result>(
        _ data: Data, options: ImageDecodingOptions, _ body: (UnsafeMutablePointer<avifDecoder>) throws -> Result
    ) throws -> Result {
        guard let decoder = avifDecoderCreate() else { throw CodecError.libavif(.outOfMemory) }
        defer { avifDecoderDestroy(decoder) }
        decoder.pointee.codecChoice = AVIF_CODEC_CHOICE_DAV1D
        decoder.pointee.maxThreads = 1
        // Browsers show files that bend the rules (a missing pixi box, a clap off the grid).
        decoder.pointee.strictFlags = AVIF_STRICT_DISABLED.rawValue
        decoder.pointee.imageSizeLimit = UInt32(clamping: max(options.maximumPixelCount, 1))
        decoder.pointee.ignoreXMP = 1
        decoder.pointee.ignoreExif = 0
        return try data.withUnsafeBytes { raw in
            try AVIFFailure.check(avifDecoderSetIOMemory(decoder, raw.bindMemory(to: UInt8.self).baseAddress, raw.count), .input)
            try AVIFFailure.check(avifDecoderParse(decoder), .parse)
            guard decoder.pointee.image != nil, decoder.pointee.imageCount > 0 else { throw CodecError.libavif(.noImage) }
            return try body(decoder)
        }
    }

    /// The crop, rotation and mirror of the image's transform properties.
    private static func transform(of image: avifImage) -> Transform {
        let flags = image.transformFlags
        var transform = Transform(crop: nil, quarterTurns: 0, mirror: nil)
        if flags & AVIF_TRANSFORM_CLAP.rawValue != 0 {
            var clap = image.clap
            var rect = avifCropRect()
            var diagnostics = avifDiagnostics()
            if avifCropRectConvertCleanApertureBox(&rect, &clap, image.width, image.height, image.yuvFormat, &diagnostics) != 0,
               rect.width > 0, rect.height > 0 {
                transform.crop = (Int(rect.x), Int(rect.y), Int(rect.width), Int(rect.height))
            }
        }
        if flags & AVIF_TRANSFORM_IROT.rawValue != 0 { transform.quarterTurns = Int(image.irot.angle & 3) }
        if flags & AVIF_TRANSFORM_IMIR.rawValue != 0 { transform.mirror = Int(image.imir.mode & 1) }
        return transform
    }

    /// The image's ICC profile, or the one its CICP values describe.
    private static func colorProfile(of image: avifImage) -> ColorProfile? {
        if image.icc.size > 0, let bytes = image.icc.data {
            return ColorProfile(data: Data(bytes: bytes, count: image.icc.size))
        }
        return CICP.profile(primaries: Int(image.colorPrimaries), transfer: Int(image.transferCharacteristics)) {
            var values = [Float](repeating: 0, count: 8)   // red, green, blue, white: x, y each
            avifColorPrimariesGetValues(image.colorPrimaries, &values)
            let v = values.map(Double.init)
            return Chromaticities(white: (v[6], v[7]), red: (v[0], v[1]), green: (v[2], v[3]), blue: (v[4], v[5]))
        }
    }
}
