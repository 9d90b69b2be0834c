import CJxl
import Foundation
import Imago

extension CodecFunctions where State == JXLState {
    /// The production table for JPEG XL, over libjxl.
    ///
    /// `open` reads the basic info, the colour encoding and every frame
    /// header, without decoding pixels: the size (upright, after the
    /// orientation the codestream declares), alpha, the frame count of an
    /// animation and its loop count. The colour profile is `nil` when the
    /// image is sRGB; otherwise it is the ICC profile libjxl gives for the
    /// decoded pixels (the file's own, or one libjxl writes for an encoded
    /// colour space such as Display P3).
    ///
    /// `makeImage` decodes to `.rgb8`, or `.rgba8` when the image has
    /// alpha (not premultiplied), upright. An animation's frames come
    /// composited to the full canvas (libjxl's coalescing), each with its
    /// duration; with a frame index, the frames before it are skipped by
    /// libjxl and a one-frame image is returned. Decoding runs on the
    /// calling thread. There is no scaled decoding: ``CodecDecoder``
    /// resizes to a thumbnail afterwards.
    ///
    /// Errors are ``CodecError`` values with `library == "libjxl"`.
    ///
    /// ```swift
    /// let decoder = CodecDecoder(format: .jxl, functions: .jxl)
    /// let image = try decoder.decode(data)
    /// ```
    public static var jxl: CodecFunctions<JXLState> {
        CodecFunctions(
            open: { data, _ in
                let state = try JXLState(reading: data)
                return OpenedImage(width: state.width, height: state.height, frameCount: state.frameCount, state: state,
                                   colorProfile: state.colorProfile)
            },
            makeImage: { opened, frameIndex, _ in
                try opened.state.decode(frameIndex: frameIndex)
            },
            frames: { opened, last, _, body in
                try opened.state.forEachFrame(through: last, body)
            }
        )
    }
}

/// What the JPEG XL table's `open` learned about a file, kept with the data
/// for its `makeImage`.
///
/// Only `CodecFunctions.jxl` makes one, so its `makeImage` always receives
/// a file its `open` has read.
public struct JXLState: Sendable {
    /// The encoded file.
    let data: Data
    /// The upright width.
    let width: Int
    /// The upright height.
    let height: Int
    /// Whether the image has an alpha channel.
    let hasAlpha: Bool
    /// The number of frames libjxl delivers (1 for a still image).
    let frameCount: Int
    /// The animation's loop count (`0` = forever); 1 for a still image.
    let loopCount: Int
    /// Seconds per tick of the animation's frame durations.
    let secondsPerTick: Double
    /// The decoded pixels' colour profile; `nil` for sRGB.
    let colorProfile: ColorProfile?

    /// Reads the headers of `data` without decoding pixels.
    init(reading data: Data) throws {
        var info = JxlBasicInfo()
        var profile: ColorProfile?
        var frames = 0
        try Self.run(data, events: [JXL_DEC_BASIC_INFO, JXL_DEC_COLOR_ENCODING, JXL_DEC_FRAME]) { decoder, event in
            switch event {
            case JXL_DEC_BASIC_INFO:
                try JXLFailure.check(JxlDecoderGetBasicInfo(decoder, &info), .basicInfo)
            case JXL_DEC_COLOR_ENCODING:
                profile = try Self.colorProfile(of: decoder)
            case JXL_DEC_FRAME:
                frames += 1
            default:
                break
            }
        }
        guard info.xsize > 0, info.ysize > 0, frames > 0 else { throw CodecError.libjxl(.noImage) }
        self.data = data
        let turned = info.orientation.rawValue >= JXL_ORIENT_TRANSPOSE.rawValue
        width = Int(turned ? info.ysize : info.xsize)
        height = Int(turned ? info.xsize : info.ysize)
        hasAlpha = info.alpha_bits > 0
        frameCount = frames
        let animated = info.have_animation != 0
        loopCount = animated ? Int(info.animation.num_loops) : 1
        secondsPerTick = animated && info.animation.tps_numerator > 0
            ? Double(info.animation.tps_denominator) / Double(info.animation.tps_numerator) : 0
        colorProfile = profile
    }

    /// Decodes every frame, or frame `frameIndex` alone.
    func decode(frameIndex: Int?) throws -> Image {
        var frames: [ImageFrame] = []
        try walk(skipping: frameIndex ?? 0) { frame in
            frames.append(frame)
            // A requested frame is the first one delivered after the skip.
            return frameIndex == nil && frames.count < frameCount
        }
        guard !frames.isEmpty else { throw CodecError.libjxl(.noImage) }
        let pixelFormat: PixelFormat = hasAlpha ? .rgba8 : .rgb8
        return Image(width: width, height: height, pixelFormat: pixelFormat, bytesPerRow: width * pixelFormat.bytesPerPixel,
                     frames: frames, loopCount: loopCount)
    }

    /// Decodes frames 0...`last` and hands each to `body` as a one-frame
    /// image until `body` returns `false`.
    func forEachFrame(through last: Int, _ body: (Image) throws -> Bool) throws {
        let pixelFormat: PixelFormat = hasAlpha ? .rgba8 : .rgb8
        var delivered = 0
        try walk(skipping: 0) { frame in
            delivered += 1
            let image = Image(width: width, height: height, pixelFormat: pixelFormat, bytesPerRow: width * pixelFormat.bytesPerPixel,
                              frames: [frame], loopCount: loopCount)
            return try body(image) && delivered <= last
        }
        guard delivered > 0 else { throw CodecError.libjxl(.noImage) }
    }

    /// Runs libjxl over the frames after the first `skipped`, handing each
    /// decoded frame to `emit` until it returns `false` or the file ends.
    private func walk(skipping skipped: Int, _ emit: (ImageFrame) throws -> Bool) throws {
        let pixelFormat: PixelFormat = hasAlpha ? .rgba8 : .rgb8
        let bytesPerRow = width * pixelFormat.bytesPerPixel
        let frameSize = bytesPerRow * height
        var format = JxlPixelFormat(num_channels: UInt32(pixelFormat.bytesPerPixel), data_type: JXL_TYPE_UINT8,
                                    endianness: JXL_NATIVE_ENDIAN, align: 0)
        var duration: TimeInterval = 0
        try Self.run(data, events: [JXL_DEC_FRAME, JXL_DEC_FULL_IMAGE], skippingFrames: skipped) { decoder, event in
            switch event {
            case JXL_DEC_FRAME:
                var header = JxlFrameHeader()
                try JXLFailure.check(JxlDecoderGetFrameHeader(decoder, &header), .frameHeader)
                duration = Double(header.duration) * secondsPerTick
            case JXL_DEC_NEED_IMAGE_OUT_BUFFER:
                var size = 0
                try JXLFailure.check(JxlDecoderImageOutBufferSize(decoder, &format, &size), .outputBuffer)
                guard size == frameSize else { throw CodecError.libjxl(.unexpectedImage(width: width, height: height)) }
                // libjxl writes into the buffer over the next calls: they all
                // happen here, while the buffer's address is valid.
                let pixels = try [UInt8](pixelCapacity: frameSize) { buffer, count in
                    try JXLFailure.check(JxlDecoderSetImageOutBuffer(decoder, &format, buffer.baseAddress, frameSize), .outputBuffer)
                    try Self.process(decoder, until: JXL_DEC_FULL_IMAGE)
                    count = frameSize
                }
                return try emit(ImageFrame(pixels: pixels, duration: duration))
            default:
                break
            }
            return true
        }
    }

    /// Feeds all of `data` to a new decoder subscribed to `events` and calls
    /// `body` for each event until libjxl reports success or `body` returns
    /// `false`. Truncated input and decoder errors throw.
    private static func run(
        _ data: Data, events: [JxlDecoderStatus], skippingFrames: Int = 0, _ body: (OpaquePointer, JxlDecoderStatus) throws -> Bool
    ) throws {
        guard let decoder = JxlDecoderCreate(nil) else { throw CodecError.libjxl(.outOfMemory) }
        defer { JxlDecoderDestroy(decoder) }
        try JXLFailure.check(JxlDecoderSubscribeEvents(decoder, Int32(events.reduce(0) { $0 | $1.rawValue })), .subscribe)
        try data.withUnsafeBytes { raw in
            try JXLFailure.check(JxlDecoderSetInput(decoder, raw.bindMemory(to: UInt8.self).baseAddress, raw.count), .input)
            JxlDecoderCloseInput(decoder)
            if skippingFrames > 0 { JxlDecoderSkipFrames(decoder, skippingFrames) }
            while true {
                let status = try process(decoder)
                if status == JXL_DEC_SUCCESS { return }
                if try !body(decoder, status) { return }
            }
        }
    }

    /// The decoder's next event; an error or truncated input throws.
    @discardableResult
    private static func process(_ decoder: OpaquePointer) throws -> JxlDecoderStatus {
        let status = JxlDecoderProcessInput(decoder)
        switch status {
        case JXL_DEC_ERROR: throw CodecError.libjxl(.corrupt)
        case JXL_DEC_NEED_MORE_INPUT: throw CodecError.libjxl(.truncated)
        default: return status
        }
    }

    /// Runs the decoder until it reports `event`; ending first throws.
    private static func process(_ decoder: OpaquePointer, until event: JxlDecoderStatus) throws {
        while true {
            let status = try process(decoder)
            if status == event { return }
            if status == JXL_DEC_SUCCESS { throw CodecError.libjxl(.truncated) }
        }
    }

    /// Like ``run(_:events:skippingFrames:_:)`` for a body that always goes on.
    private static func run(_ data: Data, events: [JxlDecoderStatus], _ body: (OpaquePointer, JxlDecoderStatus) throws -> Void) throws {
        try run(data, events: events) { decoder, status in try body(decoder, status); return true }
    }

    /// The decoded pixels' profile: `nil` when libjxl describes them as
    /// sRGB, else its ICC profile for them.
    private static func colorProfile(of decoder: OpaquePointer) throws -> ColorProfile? {
        var encoding = JxlColorEncoding()
        if JxlDecoderGetColorAsEncodedProfile(decoder, nil, JXL_COLOR_PROFILE_TARGET_DATA, &encoding) == JXL_DEC_SUCCESS,
           encoding.color_space == JXL_COLOR_SPACE_RGB || encoding.color_space == JXL_COLOR_SPACE_GRAY,
           encoding.white_point == JXL_WHITE_POINT_D65, encoding.transfer_function == JXL_TRANSFER_FUNCTION_SRGB,
           encoding.color_space == JXL_COLOR_SPACE_GRAY || encoding.primaries == JXL_PRIMARIES_SRGB {
            return nil
        }
        var size = 0
        guard JxlDecoderGetICCProfileSize(decoder, nil, JXL_COLOR_PROFILE_TARGET_DATA, &size) == JXL_DEC_SUCCESS, size > 0 else {
            return nil
        }
        var bytes = [UInt8](repeating: 0, count: size)
        try JXLFailure.check(JxlDecoderGetColorAsICCProfile(decoder, nil, JXL_COLOR_PROFILE_TARGET_DATA, &bytes, size), .colorProfile)
        return ColorProfile(data: Data(bytes))
    }
}
