import CDeflate
import CImagoKernels
import Foundation
import Imago

/// An animated PNG's structure, read from its chunks (libspng does not
/// know APNG), and the compositing of its frames.
///
/// An 8-bit RGBA frame, or 8-bit RGB without `tRNS`, is decoded by
/// ``APNGFastFrame`` (igzip's inflate and Imago's unfiltering, straight
/// into the canvas when an RGBA frame replaces it).
/// Any other frame, and any the fast path declines, is decoded by libspng
/// from a small PNG made of the file's
/// `IHDR` (with the frame's size), `PLTE` and `tRNS` chunks and the frame's
/// data (`IDAT`, or `fdAT` without its sequence number). Each is drawn on an
/// RGBA canvas as the frame's `fcTL` says (APNG 1.0): blended over the
/// canvas or replacing it, then disposed of (kept, cleared to transparent
/// black, or restored) before the next frame.
///
/// A file whose animation chunks break the specification (a frame count
/// that differs from `acTL`'s, a frame outside the canvas, an empty frame,
/// sequence numbers out of order) is shown as browsers show it: as its
/// still default image. Animation chunks are ancillary: one with a bad
/// checksum is skipped, as any ancillary chunk is, which breaks the
/// animation, so the still image shows.
struct APNG: Sendable {
    /// One frame's control chunk and where its data is.
    struct Frame: Sendable {
        var width: Int
        var height: Int
        var x: Int
        var y: Int
        /// The delay, in seconds.
        var duration: TimeInterval
        /// 0: none, 1: background (clear), 2: previous (restore).
        var disposal: UInt8
        /// 0: source (replace), 1: over (alpha blend).
        var blend: UInt8
        /// The ranges of compressed image data in the file, in order.
        var data: [Range<Int>]
    }

    /// The frames, in display order.
    var frames: [Frame]
    /// How many times the animation plays; `0` means forever.
    var loopCount: Int
    /// The `IHDR` payload (13 bytes).
    var header: [UInt8]
    /// The `PLTE` and `tRNS` chunks, whole, as the frames need them.
    var paletteChunks: [UInt8]
}

extension APNG {
    /// The animation `data` describes, or `nil` for a still PNG: one without
    /// animation chunks, one whose animation chunks are invalid, or one
    /// whose single frame is the default image.
    init?(reading data: Data) {
        guard let parsed = data.withUnsafeBytes({ Self.parse($0) }) else { return nil }
        self = parsed
    }

    /// Walks the chunks of `raw` (its signature already checked by libspng);
    /// a still PNG's walk stops at its first `IDAT`.
    private static func parse(_ raw: UnsafeRawBufferPointer) -> APNG? {
        let bytes = raw.bindMemory(to: UInt8.self)
        func u32(_ offset: Int) -> Int {
            Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
        }
        func u16(_ offset: Int) -> Int { Int(bytes[offset]) << 8 | Int(bytes[offset + 1]) }
        var offset = 8
        var header: [UInt8] = []
        var paletteChunks: [UInt8] = []
        var declaredFrames = 0, loopCount = 0
        var sawAnimationControl = false, sawImageData = false, defaultImageIsFirstFrame = false
        var frames: [Frame] = []
        var nextSequence = 0
        while offset + 12 <= bytes.count {
            let length = u32(offset)
            let body = offset + 8
            guard length <= bytes.count - body - 4 else { return nil }
            let type = (bytes[offset + 4], bytes[offset + 5], bytes[offset + 6], bytes[offset + 7])
            let isAnimationChunk = type == (0x61, 0x63, 0x54, 0x4C) || type == (0x66, 0x63, 0x54, 0x4C) || type == (0x66, 0x64, 0x41, 0x54)
            if isAnimationChunk && libdeflate_crc32(0, bytes.baseAddress! + offset + 4, length + 4) != UInt32(u32(body + length)) {
                return nil
            }
            switch type {
            case (0x49, 0x48, 0x44, 0x52):   // IHDR
                guard length == 13 else { return nil }
                header = Array(bytes[body..<body + 13])
            case (0x50, 0x4C, 0x54, 0x45), (0x74, 0x52, 0x4E, 0x53):   // PLTE, tRNS
                if !sawImageData { paletteChunks += bytes[offset..<body + length + 4] }
            case (0x61, 0x63, 0x54, 0x4C):   // acTL
                guard length == 8, !sawImageData, !sawAnimationControl else { return nil }
                sawAnimationControl = true
                declaredFrames = u32(body)
                loopCount = u32(body + 4)
            case (0x66, 0x63, 0x54, 0x4C):   // fcTL
                guard sawAnimationControl, length == 26, u32(body) == nextSequence else { return nil }
                nextSequence += 1
                let numerator = u16(body + 20), denominator = u16(body + 22)
                frames.append(Frame(
                    width: u32(body + 4), height: u32(body + 8), x: u32(body + 12), y: u32(body + 16),
                    duration: Double(numerator) / Double(denominator == 0 ? 100 : denominator),
                    disposal: bytes[body + 24], blend: bytes[body + 25], data: []
                ))
            case (0x49, 0x44, 0x41, 0x54):   // IDAT: frame 0's data when its fcTL came first
                guard sawAnimationControl else { return nil }
                if !sawImageData { defaultImageIsFirstFrame = frames.count == 1 }
                guard !defaultImageIsFirstFrame || frames.count == 1 else { return nil }
                if defaultImageIsFirstFrame { frames[0].data.append(body..<body + length) }
                sawImageData = true
            case (0x66, 0x64, 0x41, 0x54):   // fdAT
                guard sawImageData, !frames.isEmpty, length > 4, u32(body) == nextSequence else { return nil }
                nextSequence += 1
                frames[frames.count - 1].data.append(body + 4..<body + length)
            case (0x49, 0x45, 0x4E, 0x44):   // IEND
                offset = bytes.count
                continue
            default:
                break
            }
            offset = body + length + 4
        }
        guard sawAnimationControl, header.count == 13, declaredFrames == frames.count, declaredFrames > 0 else { return nil }
        let canvasWidth = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
        let canvasHeight = Int(header[4]) << 24 | Int(header[5]) << 16 | Int(header[6]) << 8 | Int(header[7])
        for frame in frames {
            guard frame.width > 0, frame.height > 0, !frame.data.isEmpty, frame.disposal <= 2, frame.blend <= 1,
                  frame.x <= canvasWidth - frame.width, frame.y <= canvasHeight - frame.height else { return nil }
        }
        // One frame that is the default image, over the whole canvas: a still PNG.
        if frames.count == 1, defaultImageIsFirstFrame, frames[0].x == 0, frames[0].y == 0,
           frames[0].width == canvasWidth, frames[0].height == canvasHeight {
            return nil
        }
        return APNG(frames: frames, loopCount: loopCount, header: header, paletteChunks: paletteChunks)
    }

    /// Decodes and composites every frame up to `last`, returning the
    /// composited canvases of `wanted` (every frame when `nil`).
    ///
    /// With `fastPath`, 8-bit RGBA and RGB frames are decoded by ``APNGFastFrame``
    /// (libspng decodes those it declines, and the others).
    func decode(_ data: Data, width: Int, height: Int, through last: Int, keeping wanted: Int?, fastPath: Bool = true) throws -> Image {
        var output: [ImageFrame] = []
        try composite(data, width: width, height: height, through: last, fastPath: fastPath) { index, canvas in
            if wanted == nil || wanted == index { output.append(canvas) }
            return true
        }
        return Image(width: width, height: height, pixelFormat: .rgba8, frames: output, loopCount: loopCount)
    }

    /// Decodes and composites frames 0...`last`, handing each to `body` as
    /// a one-frame image until `body` returns `false`: one canvas in memory.
    func forEachFrame(_ data: Data, width: Int, height: Int, through last: Int, fastPath: Bool = true,
                      _ body: (Image) throws -> Bool) throws {
        try composite(data, width: width, height: height, through: last, fastPath: fastPath) { _, canvas in
            try body(Image(width: width, height: height, pixelFormat: .rgba8, frames: [canvas], loopCount: loopCount))
        }
    }

    /// Composites frames 0...`last` on one canvas, handing each composited
    /// canvas to `emit` until it returns `false`.
    private func composite(_ data: Data, width: Int, height: Int, through last: Int, fastPath: Bool,
                           _ emit: (Int, ImageFrame) throws -> Bool) throws {
        let rowBytes = width * 4
        var canvas = [UInt8](repeating: 0, count: rowBytes * height)
        let fastFrame = fastPath ? APNGFastFrame(header: header, paletteChunks: paletteChunks) : nil
        for index in 0...last {
            let frame = frames[index]
            // The spec: a first frame disposed to "previous" is disposed to "background".
            let disposal = index == 0 && frame.disposal == 2 ? 1 : frame.disposal
            let saved = disposal == 2 ? region(of: canvas, rowBytes: rowBytes, frame: frame) : []
            let blend = index == 0 ? 0 : frame.blend
            let drawn = fastFrame?.draw(frame, from: data, on: &canvas, canvasWidth: width, blend: blend) ?? false
            if !drawn {
                let pixels = try decodeFrame(index, from: data)
                draw(pixels, on: &canvas, rowBytes: rowBytes, frame: frame, blend: blend)
            }
            guard try emit(index, ImageFrame(pixels: canvas, duration: frame.duration)) else { return }
            switch disposal {
            case 1: fill(&canvas, rowBytes: rowBytes, frame: frame, with: nil)
            case 2: fill(&canvas, rowBytes: rowBytes, frame: frame, with: saved)
            default: break
            }
        }
    }

    /// Frame `index`'s pixels, RGBA8, decoded by libspng from a PNG made of its data.
    private func decodeFrame(_ index: Int, from data: Data) throws -> [UInt8] {
        let frame = frames[index]
        var png = PNGEncoder.signature
        var ihdr = header
        for shift in 0..<4 {
            ihdr[shift] = UInt8(truncatingIfNeeded: frame.width >> (24 - 8 * shift))
            ihdr[4 + shift] = UInt8(truncatingIfNeeded: frame.height >> (24 - 8 * shift))
        }
        Self.append(chunk: Array("IHDR".utf8), ihdr, to: &png)
        png += paletteChunks
        var compressed: [UInt8] = []
        data.withUnsafeBytes { raw in
            for range in frame.data { compressed += raw[range] }
        }
        Self.append(chunk: Array("IDAT".utf8), compressed, to: &png)
        Self.append(chunk: Array("IEND".utf8), [], to: &png)
        let limits = (width: UInt32(clamping: frame.width), height: UInt32(clamping: frame.height))
        return try SpngContext.withContext(Data(png), imageLimits: limits) { context in try context.decodeRGBA() }
    }

    /// Appends a chunk of `type` with `body` and its checksum.
    static func append<Body: Collection<UInt8>>(chunk type: [UInt8], _ body: Body, to png: inout [UInt8]) {
        let length = UInt32(body.count)
        png += [UInt8(length >> 24), UInt8(truncatingIfNeeded: length >> 16), UInt8(truncatingIfNeeded: length >> 8), UInt8(truncatingIfNeeded: length)]
        let start = png.count
        png += type
        png += body
        let crc = png[start...].withUnsafeBufferPointer { libdeflate_crc32(0, $0.baseAddress, $0.count) }
        png += [UInt8(crc >> 24), UInt8(truncatingIfNeeded: crc >> 16), UInt8(truncatingIfNeeded: crc >> 8), UInt8(truncatingIfNeeded: crc)]
    }

    /// Draws a frame's RGBA pixels at its place: replacing the canvas
    /// (`blend` 0) or composited over it (`blend` 1, straight alpha; see
    /// `imago_apng_blend_over_row`).
    private func draw(_ pixels: [UInt8], on canvas: inout [UInt8], rowBytes: Int, frame: Frame, blend: UInt8) {
        let frameRowBytes = frame.width * 4
        precondition(pixels.count >= frameRowBytes * frame.height && (frame.y + frame.height) * rowBytes <= canvas.count
                     && frame.x * 4 + frameRowBytes <= rowBytes)
        pixels.withUnsafeBufferPointer { pixels in
            canvas.withUnsafeMutableBufferPointer { canvas in
                for row in 0..<frame.height {
                    let source = pixels.baseAddress! + row * frameRowBytes
                    let target = canvas.baseAddress! + (frame.y + row) * rowBytes + frame.x * 4
                    if blend == 0 {
                        target.update(from: source, count: frameRowBytes)
                    } else {
                        imago_apng_blend_over_row(source, target, frame.width)
                    }
                }
            }
        }
    }

    /// A copy of the canvas under the frame's rectangle.
    private func region(of canvas: [UInt8], rowBytes: Int, frame: Frame) -> [UInt8] {
        var copy: [UInt8] = []
        copy.reserveCapacity(frame.width * frame.height * 4)
        for row in 0..<frame.height {
            let start = (frame.y + row) * rowBytes + frame.x * 4
            copy += canvas[start..<start + frame.width * 4]
        }
        return copy
    }

    /// Clears the frame's rectangle to transparent black, or restores it from `saved`.
    private func fill(_ canvas: inout [UInt8], rowBytes: Int, frame: Frame, with saved: [UInt8]?) {
        for row in 0..<frame.height {
            let start = (frame.y + row) * rowBytes + frame.x * 4
            if let saved {
                canvas.replaceSubrange(start..<start + frame.width * 4, with: saved[row * frame.width * 4..<(row + 1) * frame.width * 4])
            } else {
                canvas.replaceSubrange(start..<start + frame.width * 4, with: repeatElement(0, count: frame.width * 4))
            }
        }
    }
}
