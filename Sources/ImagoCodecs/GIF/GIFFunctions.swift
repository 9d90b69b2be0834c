import CGif
import CImagoKernels
import Foundation
import Imago

extension CodecFunctions where State == GIFState {
    /// The production table for GIF, over giflib's record-level API, reading
    /// from memory.
    ///
    /// `open` reads the screen descriptor and walks the records without
    /// decoding any pixels (rasters are skipped block by block), so a canvas
    /// or frame count over the ``ImageDecodingOptions`` limits is rejected by
    /// ``CodecDecoder`` before a pixel buffer exists. It counts frames only up
    /// to one past ``ImageDecodingOptions/maximumFrameCount`` (enough for
    /// ``CodecDecoder`` to reject the file, which is its decision). It fails when
    /// the file has no image frame. Data that ends, or turns to garbage,
    /// after at least one whole frame keeps the whole frames before it, as
    /// browsers do. A frame whose LZW minimum code size is 9 to 11, which
    /// giflib refuses, is decoded by Imago's own LZW decoder, as browsers
    /// and Pillow decode it.
    ///
    /// `makeImage` always produces ``PixelFormat/rgba8``, not premultiplied.
    /// It draws frames in order on a canvas that starts transparent black,
    /// with the rules browsers follow:
    /// - the frame's local colour map, else the global one; a colour index
    ///   past the end of the map draws opaque black; with no map at all, an
    ///   index draws as that level of gray (as Pillow shows such files);
    /// - a frame that extends past the canvas is clipped to it;
    /// - the transparent index of the Graphics Control Extension leaves the
    ///   canvas unchanged; the background colour is ignored;
    /// - disposal 0 and 1 keep the frame, 2 clears its rectangle to
    ///   transparent, 3 (and 4, an old synonym) restores what was under it;
    /// - interlaced frames are put back in row order;
    /// - ``ImageFrame/duration`` is the delay (centiseconds x 10 ms), except
    ///   that 0 and 1 cs become 100 ms; a one-frame file has no duration;
    /// - ``Image/loopCount`` is the NETSCAPE2.0 count as stored (0 = forever),
    ///   1 without that extension or for a one-frame file.
    ///
    /// With a frame index `k`, frames 0...k are drawn and the image holds
    /// frame k only, with its duration; otherwise it holds every frame.
    /// With a thumbnail, each frame is downscaled as soon as it is drawn, to
    /// the thumbnail's size, so an animation never holds its frames at full
    /// size: the memory is one canvas plus the small frames. The pixels are
    /// those of a full decode followed by ``Image/resized(width:height:)``.
    /// Errors are ``CodecError``s from library `"giflib"`.
    ///
    /// The rasters of frames inside the canvas are decoded by Imago's LZW
    /// decoder (`imago_gif_lzw_decode`), a whole frame at a time; any frame
    /// it does not take (damaged data, an unusual code size) is decoded by
    /// giflib, so the pixels and the errors are giflib's either way.
    public static var gif: CodecFunctions<GIFState> { gif(fastLZW: true) }

    /// The GIF table, with or without Imago's LZW decoder (tests compare the two).
    static func gif(fastLZW: Bool) -> CodecFunctions<GIFState> {
        CodecFunctions(
            open: { data, options in
                var state = try GIFState(data, maximumFrameCount: options.maximumFrameCount)
                state.fastLZW = fastLZW
                return OpenedImage(width: state.width, height: state.height, frameCount: state.frames.count, state: state)
            },
            makeImage: { opened, frameIndex, options in
                try opened.state.decode(frameIndex: frameIndex, thumbnail: options.thumbnail)
            },
            frames: { opened, last, options, body in
                try opened.state.forEachFrame(through: last, thumbnail: options.thumbnail, body)
            }
        )
    }
}

/// What the GIF table's `open` learned: the canvas, the frame headers and
/// the loop count, carried to its `makeImage` with the data.
///
/// Only `CodecFunctions.gif` makes one, so its `makeImage` always
/// receives a file its `open` has walked.
public struct GIFState: Sendable {
    let data: Data
    let width: Int
    let height: Int
    /// The whole frames, at most one past the frame limit.
    let frames: [GIFFrameHeader]
    /// The NETSCAPE2.0 loop count; `nil` when the file has none.
    let loopCount: Int?
    /// Whether frames inside the canvas are decoded by Imago's LZW decoder
    /// (giflib still decodes those it declines).
    var fastLZW = true

    /// Walks the records of `data`, skipping every raster.
    ///
    /// The walk stops one frame past `maximumFrameCount`: that is enough for
    /// ``CodecDecoder`` to reject the file (the decision is its own), and a
    /// file of millions of tiny frames is not walked to its end.
    init(_ data: Data, maximumFrameCount: Int) throws {
        let stopAt = maximumFrameCount < Int.max ? max(1, maximumFrameCount + 1) : Int.max
        var frames: [GIFFrameHeader] = []
        var size = (width: 0, height: 0)
        let loopCount = try GIFFile.withFile(data) { file in
            size = (file.canvasWidth, file.canvasHeight)
            return try file.walk(stoppingOnTruncation: true) { frame in
                try file.skipRaster()
                frames.append(frame)
                return frames.count < stopAt
            }
        }
        guard !frames.isEmpty else {
            throw CodecError.giflib(D_GIF_ERR_NO_IMAG_DSCR, detail: "the file has no whole image frame")
        }
        self.data = data
        (width, height) = size
        self.frames = frames
        self.loopCount = loopCount
    }

    /// Draws frames 0...`frameIndex` (every frame when `nil`) and returns the
    /// requested one, or all of them. `frameIndex` is one of ``frames``:
    /// ``CodecDecoder`` has checked it (the contract of `makeImage`). With a
    /// `thumbnail`, each frame kept is downscaled to its size as it is drawn.
    func decode(frameIndex: Int?, thumbnail: Thumbnail? = nil) throws -> Image {
        let last = frameIndex ?? frames.count - 1
        var output: [ImageFrame] = []
        output.reserveCapacity(frameIndex == nil ? frames.count : 1)
        let size = try draw(through: last, thumbnail: thumbnail) { index, frame in
            if frameIndex == nil || index == last { output.append(frame()) }
            return true
        }
        guard output.count == (frameIndex == nil ? frames.count : 1) else {
            throw CodecError.giflib(D_GIF_ERR_EOF_TOO_SOON, detail: "the file ended before frame \(last)")
        }
        return Image(width: size.width, height: size.height, pixelFormat: .rgba8, frames: output,
                     loopCount: frames.count > 1 ? loopCount ?? 1 : 1)
    }

    /// Draws frames 0...`last` and hands each to `body` as a one-frame
    /// image, until `body` returns `false`: one canvas in memory, however
    /// many frames.
    func forEachFrame(through last: Int, thumbnail: Thumbnail?, _ body: (Image) throws -> Bool) throws {
        let loop = frames.count > 1 ? loopCount ?? 1 : 1
        let size = outputSize(thumbnail)
        var delivered = 0
        var stopped = false
        _ = try draw(through: last, thumbnail: thumbnail) { _, frame in
            delivered += 1
            stopped = try !body(Image(width: size.width, height: size.height, pixelFormat: .rgba8, frames: [frame()], loopCount: loop))
            return !stopped
        }
        guard stopped || delivered == last + 1 else {
            throw CodecError.giflib(D_GIF_ERR_EOF_TOO_SOON, detail: "the file ended before frame \(last)")
        }
    }

    /// The size frames are drawn at: the canvas, or the thumbnail's size within it.
    private func outputSize(_ thumbnail: Thumbnail?) -> (width: Int, height: Int) {
        thumbnail?.downscaledSize(width: width, height: height) ?? (width, height)
    }

    /// Composites frames 0...`last` on one canvas and hands each, with its
    /// index, to `emit` (as a function that copies it out, downscaled to
    /// the thumbnail's size when there is one: frames that are not wanted
    /// cost nothing more) until `emit` returns `false`.
    ///
    /// - Returns: The size of the frames handed over.
    private func draw(through last: Int, thumbnail: Thumbnail?,
                      _ emit: (Int, () -> ImageFrame) throws -> Bool) throws -> (width: Int, height: Int) {
        let isAnimated = frames.count > 1
        let size = outputSize(thumbnail)
        let plan = thumbnail?.downscalingPlan(width: width, height: height)
        var canvas = GIFCanvas(width: width, height: height)
        // The colour indices of a whole frame inside the canvas, for Imago's LZW decoder.
        let indices = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: fastLZW ? width * height + Int(IMAGO_GIF_LZW_SLACK) : 0)
        defer { indices.deallocate() }
        _ = try GIFFile.withFile(data) { file in
            try file.walk(stoppingOnTruncation: false) { frame in
                // The same bytes walked the same way in `open`.
                guard frames.indices.contains(frame.index), frame == frames[frame.index] else {
                    throw CodecError.giflib(D_GIF_ERR_IMAGE_DEFECT, detail: "frame \(frame.index) differs from the opened file")
                }
                let isInside = frame.width > 0 && frame.height > 0 && frame.left <= width - frame.width && frame.top <= height - frame.height
                if isInside, fastLZW, file.decodeRaster(into: indices, count: frame.width * frame.height) {
                    canvas.draw(frame, colors: file.colorMap, indices: indices.baseAddress!)
                } else {
                    try canvas.draw(frame, colors: file.colorMap) { row, count in try file.readRow(into: row, count: count) }
                    if frame.width == 0 || frame.height == 0 { try file.skipRaster() }
                }
                let keepsGoing = try emit(frame.index) {
                    let pixels = plan.map { $0.resample(canvas.pixels, bytesPerRow: width * 4) } ?? canvas.pixels
                    return ImageFrame(pixels: pixels, duration: isAnimated ? Self.duration(centiseconds: frame.delay) : nil)
                }
                return keepsGoing && frame.index < last
            }
        }
        return size
    }

    /// How long a frame shows. Like browsers, a delay of 0 or 1 centisecond
    /// (often written by tools that meant "as fast as possible") becomes
    /// 100 ms.
    static func duration(centiseconds: Int) -> TimeInterval {
        centiseconds <= 1 ? 0.1 : TimeInterval(centiseconds) / 100
    }
}
