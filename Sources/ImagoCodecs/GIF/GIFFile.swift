import CGif
import CImagoKernels
import Foundation

/// The header of one frame: its rectangle on the canvas and the Graphics
/// Control Extension that preceded it.
struct GIFFrameHeader: Sendable, Hashable {
    /// The position of the frame in the file, from 0.
    var index: Int
    /// The frame rectangle, as stored; it may extend past the canvas, which clips it.
    var left: Int, top: Int, width: Int, height: Int
    /// Whether the rows are stored in the four-pass interlaced order.
    var isInterlaced: Bool
    /// The delay before the next frame, in centiseconds, as stored.
    var delay: Int
    /// What to do with the frame's rectangle before the next frame is drawn.
    var disposal: GIFDisposal
    /// The colour index drawn as transparent, when there is one.
    var transparentIndex: Int?
}

/// The GIF disposal methods, as browsers read them.
enum GIFDisposal: Sendable, Hashable {
    /// Leave the frame in place (methods 0 and 1, and the undefined 5...7).
    case keep
    /// Clear the frame's rectangle to transparent (method 2).
    case restoreBackground
    /// Put back what was under the frame's rectangle (method 3; also 4,
    /// which some old encoders wrote for it and browsers accept).
    case restorePrevious

    init(method: Int32) {
        switch method {
        case 2: self = .restoreBackground
        case 3, 4: self = .restorePrevious
        default: self = .keep
        }
    }
}

/// Reads a GIF held in memory, for giflib's `InputFunc` callback.
///
/// The callback cannot capture context, so giflib hands it a pointer to
/// this struct through `GifFileType.UserData`.
private struct MemoryReader {
    let base: UnsafeRawPointer?
    let count: Int
    var offset = 0

    /// Copies up to `length` bytes into `buffer`; returns how many were copied.
    mutating func read(into buffer: UnsafeMutablePointer<GifByteType>, length: Int) -> Int {
        guard let base, length > 0 else { return 0 }
        let available = min(length, count - offset)
        guard available > 0 else { return 0 }
        buffer.update(from: (base + offset).assumingMemoryBound(to: GifByteType.self), count: available)
        offset += available
        return available
    }

    /// The next byte, or `nil` at the end.
    mutating func readByte() -> UInt8? {
        guard let base, offset < count else { return nil }
        defer { offset += 1 }
        return base.load(fromByteOffset: offset, as: UInt8.self)
    }

    /// The LZW minimum code size of an image descriptor that starts at
    /// `descriptor` (after its `0x2C`), when it is 9...11 and giflib has just
    /// read it and refused it: the reader stands right after that byte.
    func wideCodeSize(descriptor: Int) -> Int? {
        guard let base, descriptor + 9 <= count else { return nil }
        let flags = base.load(fromByteOffset: descriptor + 8, as: UInt8.self)
        let at = descriptor + 9 + (flags & 0x80 != 0 ? 3 << ((flags & 7) + 1) : 0)
        guard offset == at + 1, at < count else { return nil }
        let size = Int(base.load(fromByteOffset: at, as: UInt8.self))
        return (9...11).contains(size) ? size : nil
    }

    /// The `InputFunc` given to `DGifOpen`.
    static let input: InputFunc = { file, buffer, length in
        guard let file, let buffer, let user = file.pointee.UserData else { return 0 }
        let reader = user.assumingMemoryBound(to: MemoryReader.self)
        return Int32(reader.pointee.read(into: buffer, length: Int(length)))
    }
}

/// One giflib decoding handle over a buffer, closed when done.
///
/// It uses giflib's record-level API: ``walk(stoppingOnTruncation:_:)``
/// reads the records in order and hands each image descriptor to a closure
/// that must consume the frame's raster, by ``skipRaster()``, by
/// ``decodeRaster(into:count:)`` (Imago's LZW decoder, when it takes the
/// frame) or by reading every row with ``readRow(into:count:)``. A frame
/// whose LZW code size is 9...11, which giflib refuses, is decoded by
/// ``GIFWideLZW`` instead.
struct GIFFile: ~Copyable {
    private let handle: UnsafeMutablePointer<GifFileType>
    /// The decoder of the current frame when giflib cannot decode it.
    private let wide = WideRaster()

    /// Holds the current frame's ``GIFWideLZW``, if any.
    private final class WideRaster {
        var decoder: GIFWideLZW?
    }

    private init(_ handle: UnsafeMutablePointer<GifFileType>) { self.handle = handle }

    /// The reader giflib reads through.
    private var reader: UnsafeMutablePointer<MemoryReader> {
        handle.pointee.UserData.assumingMemoryBound(to: MemoryReader.self)
    }

    /// Reads the image descriptor after its `0x2C`; a code size of 9...11
    /// that giflib refuses switches the frame to ``GIFWideLZW``.
    private func readImageDescriptor() throws {
        let descriptor = reader.pointee.offset
        let status = DGifGetImageDesc(handle)
        wide.decoder = nil
        guard status != GIF_OK else { return }
        guard handle.pointee.Error == D_GIF_ERR_READ_FAILED, let codeSize = reader.pointee.wideCodeSize(descriptor: descriptor) else {
            try check(status)
            return
        }
        let image = handle.pointee.Image
        wide.decoder = GIFWideLZW(codeSize: codeSize, pixelCount: Int(image.Width) * Int(image.Height))
    }

    /// Runs `body` with a handle reading `data`; giflib has read the screen
    /// descriptor and the global colour map when `body` starts.
    static func withFile<T>(_ data: Data, _ body: (borrowing GIFFile) throws -> T) throws -> T {
        try data.withUnsafeBytes { bytes in
            var reader = MemoryReader(base: bytes.baseAddress, count: bytes.count)
            return try withUnsafeMutablePointer(to: &reader) { readerPointer in
                var status: Int32 = D_GIF_SUCCEEDED
                guard let handle = DGifOpen(readerPointer, MemoryReader.input, &status) else {
                    throw CodecError.giflib(status)
                }
                defer { DGifCloseFile(handle, nil) }
                return try body(GIFFile(handle))
            }
        }
    }

    /// The canvas (logical screen) width.
    var canvasWidth: Int { Int(handle.pointee.SWidth) }
    /// The canvas (logical screen) height.
    var canvasHeight: Int { Int(handle.pointee.SHeight) }

    /// The colour map of the current frame: its local map, else the global one.
    var colorMap: UnsafeBufferPointer<GifColorType>? {
        guard let map = handle.pointee.Image.ColorMap ?? handle.pointee.SColorMap,
              let colors = map.pointee.Colors,
              (1...256).contains(map.pointee.ColorCount)
        else { return nil }
        return UnsafeBufferPointer(start: colors, count: Int(map.pointee.ColorCount))
    }

    /// Throws the file's error when a giflib call failed.
    private func check(_ status: Int32) throws {
        guard status == GIF_OK else { throw CodecError.giflib(handle.pointee.Error) }
    }

    /// Reads the records up to the trailer, calling `frame` after each image
    /// descriptor. `frame`
    /// must consume the raster and returns whether to go on.
    ///
    /// With `stoppingOnTruncation`, data that ends or turns to garbage
    /// after at least one whole frame ends the walk quietly (as browsers
    /// show such files); broken headers still throw.
    ///
    /// - Returns: the NETSCAPE2.0 loop count, when the walk saw one.
    func walk(stoppingOnTruncation: Bool, _ frame: (GIFFrameHeader) throws -> Bool) throws -> Int? {
        var loopCount: Int?
        var control: GraphicsControlBlock?
        var completed = 0
        while true {
            do {
                var type = UNDEFINED_RECORD_TYPE
                try check(DGifGetRecordType(handle, &type))
                switch type {
                case IMAGE_DESC_RECORD_TYPE:
                    try readImageDescriptor()
                    let header = try frameHeader(index: completed, control: control)
                    control = nil
                    let goOn = try frame(header)
                    completed += 1
                    if !goOn { return loopCount }
                case EXTENSION_RECORD_TYPE:
                    try readExtension(control: &control, loopCount: &loopCount)
                case TERMINATE_RECORD_TYPE:
                    return loopCount
                default:
                    throw CodecError.giflib(D_GIF_ERR_WRONG_RECORD)
                }
            } catch let error as CodecError where stoppingOnTruncation && completed > 0 && Self.isTruncation(error) {
                return loopCount
            }
        }
    }

    /// Whether `error` means the data ended or stopped being GIF records.
    private static func isTruncation(_ error: CodecError) -> Bool {
        [0, D_GIF_ERR_READ_FAILED, D_GIF_ERR_WRONG_RECORD, D_GIF_ERR_EOF_TOO_SOON].contains { Int($0) == error.code }
    }

    /// The header of the image descriptor just read. A frame may extend past
    /// the canvas (it is clipped when drawn) and may have no colour map
    /// (it is drawn in gray), as browsers and Pillow accept such files.
    private func frameHeader(index: Int, control: GraphicsControlBlock?) throws -> GIFFrameHeader {
        let image = handle.pointee.Image
        let header = GIFFrameHeader(
            index: index,
            left: Int(image.Left), top: Int(image.Top), width: Int(image.Width), height: Int(image.Height),
            isInterlaced: image.Interlace,
            delay: Int(control?.DelayTime ?? 0),
            disposal: GIFDisposal(method: control?.DisposalMode ?? DISPOSAL_UNSPECIFIED),
            transparentIndex: control.flatMap { $0.TransparentColor == NO_TRANSPARENT_COLOR ? nil : Int($0.TransparentColor) }
        )
        return header
    }

    /// Reads one extension, keeping a Graphics Control Extension for the next
    /// frame and the loop count of a NETSCAPE2.0 (or ANIMEXTS1.0) extension.
    /// A malformed Graphics Control Extension is ignored.
    private func readExtension(control: inout GraphicsControlBlock?, loopCount: inout Int?) throws {
        var code: Int32 = 0
        var block: UnsafeMutablePointer<GifByteType>?
        try check(DGifGetExtension(handle, &code, &block))
        guard let first = block else { return }
        var isLoopExtension = false
        switch code {
        case GRAPHICS_EXT_FUNC_CODE:
            var parsed = GraphicsControlBlock()
            if DGifExtensionToGCB(Int(first[0]), first + 1, &parsed) == GIF_OK { control = parsed }
        case APPLICATION_EXT_FUNC_CODE:
            let identifier = UnsafeBufferPointer(start: first + 1, count: Int(first[0]))
            isLoopExtension = identifier.elementsEqual("NETSCAPE2.0".utf8) || identifier.elementsEqual("ANIMEXTS1.0".utf8)
        default:
            break
        }
        while true {
            try check(DGifGetExtensionNext(handle, &block))
            guard let next = block else { return }
            // The looping sub-block: length >= 3, id 1, count (little-endian).
            if isLoopExtension, next[0] >= 3, next[1] == 1 {
                loopCount = Int(next[2]) | Int(next[3]) << 8
            }
        }
    }

    /// Skips the current frame's compressed raster without decoding it.
    func skipRaster() throws {
        if let decoder = wide.decoder { return try decoder.skip { reader.pointee.readByte() } }
        var codeSize: Int32 = 0
        var block: UnsafeMutablePointer<GifByteType>?
        try check(DGifGetCode(handle, &codeSize, &block))
        while block != nil {
            try check(DGifGetCodeNext(handle, &block))
        }
    }

    /// Decodes the current frame's whole raster, `count` colour indices, into
    /// `indices` (which holds at least `count + IMAGO_GIF_LZW_SLACK` bytes)
    /// with Imago's LZW decoder, and moves past it. Returns `false`, having
    /// read nothing, for a raster that decoder does not take (see
    /// `imago_gif_lzw_decode`: damaged data, an unusual code size): giflib
    /// then decodes it row by row with ``readRow(into:count:)`` and decides
    /// the outcome, so the pixels and errors are always giflib's.
    func decodeRaster(into indices: UnsafeMutableBufferPointer<UInt8>, count: Int) -> Bool {
        guard wide.decoder == nil, let output = indices.baseAddress else { return false }
        let reader = reader
        let offset = reader.pointee.offset
        // giflib has read the image descriptor and the code size byte, no more.
        guard let base = reader.pointee.base, offset >= 1, offset <= reader.pointee.count else { return false }
        let codeSize = base.load(fromByteOffset: offset - 1, as: UInt8.self)
        let consumed = imago_gif_lzw_decode(base.assumingMemoryBound(to: UInt8.self) + offset, reader.pointee.count - offset,
                                            UInt32(codeSize), output, count, indices.count)
        guard consumed >= 0 else { return false }
        reader.pointee.offset += consumed
        return true
    }

    /// Decodes the next `count` colour indices of the current frame into
    /// `row`. After the frame's last row giflib skips the rest of its raster.
    func readRow(into row: UnsafeMutablePointer<GifPixelType>, count: Int) throws {
        if let decoder = wide.decoder { return try decoder.readRow(into: row, count: count) { reader.pointee.readByte() } }
        try check(DGifGetLine(handle, row, Int32(count)))
    }
}
