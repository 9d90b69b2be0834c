import CWebP
import Foundation
import Imago

/// Animated WebP over libwebpdemux: the demuxer for the header facts, the
/// animation decoder for composited frames.
enum WebPAnimation {
    /// The canvas and animation facts of an animated file.
    struct Canvas {
        /// The canvas width.
        var width: Int
        /// The canvas height.
        var height: Int
        /// The frame and loop counts.
        var animation: WebPState.Animation
    }

    /// Demuxes `data` (no pixels are decoded) and checks that every frame
    /// rectangle lies inside the canvas.
    static func inspect(_ data: Data) throws -> Canvas {
        try data.withUnsafeBytes { raw in
            var input = WebPData(bytes: raw.bindMemory(to: UInt8.self).baseAddress, size: raw.count)
            guard let demuxer = WebPDemux(&input) else { throw CodecError(.containerUnreadable) }
            defer { WebPDemuxDelete(demuxer) }
            let width = Int(WebPDemuxGetI(demuxer, WEBP_FF_CANVAS_WIDTH))
            let height = Int(WebPDemuxGetI(demuxer, WEBP_FF_CANVAS_HEIGHT))
            let frameCount = Int(WebPDemuxGetI(demuxer, WEBP_FF_FRAME_COUNT))
            let loopCount = Int(WebPDemuxGetI(demuxer, WEBP_FF_LOOP_COUNT))

            var frame = WebPIterator()
            defer { WebPDemuxReleaseIterator(&frame) }
            if WebPDemuxGetFrame(demuxer, 1, &frame) != 0 {
                repeat {
                    let x = Int(frame.x_offset), y = Int(frame.y_offset)
                    let frameWidth = Int(frame.width), frameHeight = Int(frame.height)
                    guard x >= 0, y >= 0, frameWidth > 0, frameHeight > 0,
                          x + frameWidth <= width, y + frameHeight <= height
                    else { throw CodecError(.frameOutsideCanvas(frame: Int(frame.frame_num) - 1)) }
                    // This check stays here, not in CodecDecoder: only the
                    // demuxer sees the frame rectangles.
                } while WebPDemuxNextFrame(&frame) != 0
            }
            return Canvas(width: width, height: height, animation: .init(frameCount: frameCount, loopCount: loopCount))
        }
    }

    /// Decodes every frame, or only frame `frameIndex`, as composited RGBA canvases.
    ///
    /// The frames before `frameIndex` are decoded (compositing needs them)
    /// but not copied out. `frameIndex` is one of the animation's frames:
    /// ``CodecDecoder`` has checked it (the contract of `makeImage`).
    ///
    /// With a `thumbnail` (as the stored pixels see it), each frame kept is
    /// downscaled to its size as soon as libwebp has composited it, so an
    /// animation holds libwebp's one canvas and small frames, never its
    /// frames at full size.
    static func decode(_ state: WebPState, animation: WebPState.Animation, frameIndex: Int?, thumbnail: Thumbnail? = nil) throws -> Image {
        let last = frameIndex ?? animation.frameCount - 1
        var frames: [ImageFrame] = []
        frames.reserveCapacity(frameIndex == nil ? animation.frameCount : 1)
        let size = try walk(state, animation: animation, through: last, thumbnail: thumbnail) { index, frame in
            if frameIndex == nil || frameIndex == index { frames.append(frame()) }
            return true
        }
        return Image(width: size.width, height: size.height, pixelFormat: .rgba8, frames: frames, loopCount: animation.loopCount)
    }

    /// Decodes frames 0...`last` and hands each to `body` as a one-frame
    /// image until `body` returns `false`: libwebp's one canvas, and one copy.
    static func forEachFrame(_ state: WebPState, animation: WebPState.Animation, through last: Int, thumbnail: Thumbnail? = nil,
                             _ body: (Image) throws -> Bool) throws {
        let size = state.outputSize(thumbnail)
        _ = try walk(state, animation: animation, through: last, thumbnail: thumbnail) { _, frame in
            try body(Image(width: size.width, height: size.height, pixelFormat: .rgba8, frames: [frame()], loopCount: animation.loopCount))
        }
    }

    /// Runs libwebp's animation decoder over frames 0...`last`, handing
    /// each index to `emit` with a function that copies the canvas out
    /// (downscaled to the thumbnail's size when there is one), until `emit`
    /// returns `false`.
    ///
    /// - Returns: The size of the frames handed over.
    private static func walk(_ state: WebPState, animation: WebPState.Animation, through last: Int, thumbnail: Thumbnail?,
                             _ emit: (Int, () -> ImageFrame) throws -> Bool) throws -> (width: Int, height: Int) {
        let size = state.outputSize(thumbnail)
        let plan = thumbnail?.downscalingPlan(width: state.width, height: state.height)
        try state.data.withUnsafeBytes { raw in
            var input = WebPData(bytes: raw.bindMemory(to: UInt8.self).baseAddress, size: raw.count)
            var options = WebPAnimDecoderOptions()
            guard WebPAnimDecoderOptionsInit(&options) != 0 else { throw CodecError(.animationDecoderFailed) }
            options.color_mode = MODE_RGBA
            options.use_threads = 0
            guard let decoder = WebPAnimDecoderNew(&input, &options) else { throw CodecError(.animationDecoderFailed) }
            defer { WebPAnimDecoderDelete(decoder) }

            var info = WebPAnimInfo()
            guard WebPAnimDecoderGetInfo(decoder, &info) != 0,
                  Int(info.canvas_width) == state.width, Int(info.canvas_height) == state.height,
                  Int(info.frame_count) == animation.frameCount
            else { throw CodecError(.animationDecoderFailed) }

            let canvasSize = state.width * state.height * 4
            var previousTimestamp: Int32 = 0
            for index in 0...last {
                var canvas: UnsafeMutablePointer<UInt8>?
                var timestamp: Int32 = 0
                guard WebPAnimDecoderGetNext(decoder, &canvas, &timestamp) != 0, let canvas else {
                    throw CodecError(.frameDecodingFailed(frame: index))
                }
                // Timestamps are the end times of the frames; a wrapping
                // difference stays right even if the sum overflowed.
                let duration = TimeInterval(timestamp &- previousTimestamp) / 1_000
                previousTimestamp = timestamp
                let keepsGoing = try emit(index) {
                    let pixels = plan.map { $0.resample(canvas, bytesPerRow: state.width * 4) }
                        ?? [UInt8](UnsafeBufferPointer(start: canvas, count: canvasSize))
                    return ImageFrame(pixels: pixels, duration: duration)
                }
                guard keepsGoing else { return }
            }
        }
        return size
    }
}
