import CGif
import CImagoKernels

/// The RGBA8 canvas an animated GIF is drawn on, frame after frame.
///
/// It starts transparent black. Before each frame it applies the previous
/// frame's disposal (clear its rectangle, or put back what was under it),
/// then draws the frame's opaque pixels over it; transparent pixels leave
/// the canvas as it was. Values are stored as they are, never premultiplied.
///
/// A frame that extends past the canvas (the logical screen) is clipped to
/// it: its rows and columns outside are read and dropped, and its disposal
/// touches only the part inside.
struct GIFCanvas {
    let width: Int
    let height: Int
    /// The canvas, `width * height * 4` bytes, red, green, blue, alpha.
    private(set) var pixels: [UInt8]
    /// The colour indices of one row, reused for every row of every frame.
    private var row: [UInt8]
    /// What was under the last frame, when its disposal restores it.
    private var saved: [UInt8] = []
    /// The last frame drawn, whose disposal is still to be applied.
    private var previous: GIFFrameHeader?

    /// Creates a transparent canvas; the caller has checked the size.
    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        pixels = [UInt8](repeating: 0, count: width * height * 4)
        row = [UInt8](repeating: 0, count: width)
    }

    /// The part of a frame's rectangle inside the canvas (empty when none is).
    private func visible(_ frame: GIFFrameHeader) -> (left: Int, top: Int, width: Int, height: Int) {
        let left = min(frame.left, width), top = min(frame.top, height)
        return (left, top, min(frame.width, width - left), min(frame.height, height - top))
    }

    /// Draws one frame, clipped to the canvas.
    ///
    /// - Parameters:
    ///   - colors: The frame's colour map (1...256 entries). Indices past its
    ///     end draw opaque black, so no index reads outside it. `nil` (a
    ///     file with neither a global nor a local map) draws each index as
    ///     that level of gray, as Pillow shows such files.
    ///   - readRow: Fills its buffer with the next `count` colour indices,
    ///     in the order the file stores rows.
    mutating func draw(
        _ frame: GIFFrameHeader,
        colors: UnsafeBufferPointer<GifColorType>?,
        readRow: (_ row: UnsafeMutablePointer<UInt8>, _ count: Int) throws -> Void
    ) throws {
        try draw(frame, colors: colors) { _, buffer, count in
            try readRow(buffer, count)
            return UnsafePointer(buffer)
        }
    }

    /// Draws one frame whose raster is already decoded: `indices` holds its
    /// `width * height` colour indices, rows in the order the file stores them.
    mutating func draw(_ frame: GIFFrameHeader, colors: UnsafeBufferPointer<GifColorType>?, indices: UnsafePointer<UInt8>) {
        let frameWidth = frame.width
        // Nothing throws: the rows are in memory.
        try? draw(frame, colors: colors) { storedRow, _, _ in indices + storedRow * frameWidth }
    }

    /// Applies the last frame's disposal and draws `frame`, each of its rows
    /// given by `row` (its index in the file's order, a buffer of the frame's
    /// width it may fill, that width) as the colour indices to draw.
    private mutating func draw(
        _ frame: GIFFrameHeader,
        colors: UnsafeBufferPointer<GifColorType>?,
        row indicesOfRow: (_ storedRow: Int, _ buffer: UnsafeMutablePointer<UInt8>, _ count: Int) throws -> UnsafePointer<UInt8>
    ) throws {
        if let previous {
            switch previous.disposal {
            case .keep: break
            case .restoreBackground: clear(previous)
            case .restorePrevious: copy(previous, toCanvas: true)
            }
        }
        previous = frame
        if frame.disposal == .restorePrevious { copy(frame, toCanvas: false) }
        guard frame.width > 0, frame.height > 0 else { return }

        let palette = Self.palette(colors, transparentIndex: frame.transparentIndex)
        let keepsTransparent: Int32 = frame.transparentIndex.map { (0..<256).contains($0) } == true ? 1 : 0
        let (width, height, frameWidth, left, top) = (width, self.height, frame.width, frame.left, frame.top)
        let visibleWidth = visible(frame).width
        if row.count < frameWidth { row = [UInt8](repeating: 0, count: frameWidth) }
        try pixels.withUnsafeMutableBufferPointer { canvas in
            try row.withUnsafeMutableBufferPointer { buffer in
                try palette.withUnsafeBufferPointer { palette in
                    guard let canvasBase = canvas.baseAddress, let rowBase = buffer.baseAddress, let paletteBase = palette.baseAddress else { return }
                    var storedRow = 0
                    try Self.forEachRow(height: frame.height, interlaced: frame.isInterlaced) { y in
                        let indices = try indicesOfRow(storedRow, rowBase, frameWidth)
                        storedRow += 1
                        guard top + y < height, visibleWidth > 0 else { return }
                        // An index is a byte and the palette has 256 entries.
                        imago_gif_draw_row(indices, visibleWidth, paletteBase, canvasBase + ((top + y) * width + left) * 4, keepsTransparent)
                    }
                }
            }
        }
    }

    /// The colours of a frame as 256 RGBA words in memory order: entries past
    /// the colour map are opaque black; the transparent index is 0, the one
    /// value an opaque colour never has, so drawing skips it.
    private static func palette(_ colors: UnsafeBufferPointer<GifColorType>?, transparentIndex: Int?) -> [UInt32] {
        [UInt32](unsafeUninitializedCapacity: 256) { buffer, count in
            for index in 0..<256 {
                let gray = GifColorType(Red: UInt8(index), Green: UInt8(index), Blue: UInt8(index))
                let color = colors.map { index < $0.count ? $0[index] : GifColorType(Red: 0, Green: 0, Blue: 0) } ?? gray
                let value = UInt32(color.Red) | UInt32(color.Green) << 8 | UInt32(color.Blue) << 16 | 0xFF00_0000
                buffer[index] = value.littleEndian
            }
            if let transparentIndex, (0..<256).contains(transparentIndex) { buffer[transparentIndex] = 0 }
            count = 256
        }
    }

    /// Calls `body` with each row of a frame, in the order the file stores
    /// them: top to bottom, or the four interlaced passes (every 8th row from
    /// 0, every 8th from 4, every 4th from 2, every 2nd from 1).
    private static func forEachRow(height: Int, interlaced: Bool, _ body: (Int) throws -> Void) rethrows {
        guard interlaced else {
            for y in 0..<height { try body(y) }
            return
        }
        for (start, step) in [(0, 8), (4, 8), (2, 4), (1, 2)] {
            for y in stride(from: start, to: height, by: step) { try body(y) }
        }
    }

    /// Clears a frame's rectangle to transparent black.
    private mutating func clear(_ frame: GIFFrameHeader) {
        let rect = visible(frame)
        let (width, rowBytes) = (width, rect.width * 4)
        guard rowBytes > 0 else { return }
        pixels.withUnsafeMutableBytes { canvas in
            for y in rect.top..<rect.top + rect.height {
                let start = canvas.baseAddress! + (y * width + rect.left) * 4
                start.initializeMemory(as: UInt8.self, repeating: 0, count: rowBytes)
            }
        }
    }

    /// Copies a frame's rectangle from the canvas into `saved`, or back.
    private mutating func copy(_ frame: GIFFrameHeader, toCanvas: Bool) {
        let rect = visible(frame)
        let (width, rowBytes) = (width, rect.width * 4)
        if !toCanvas { saved = [UInt8](repeating: 0, count: rowBytes * rect.height) }
        guard rowBytes > 0, rect.height > 0 else { return }
        pixels.withUnsafeMutableBytes { canvas in
            saved.withUnsafeMutableBytes { saved in
                for y in 0..<rect.height {
                    let canvasRow = canvas.baseAddress! + ((rect.top + y) * width + rect.left) * 4
                    let savedRow = saved.baseAddress! + y * rowBytes
                    if toCanvas {
                        canvasRow.copyMemory(from: savedRow, byteCount: rowBytes)
                    } else {
                        savedRow.copyMemory(from: canvasRow, byteCount: rowBytes)
                    }
                }
            }
        }
    }
}
