import CTiff
import Foundation

/// libtiff over memory: a file read from bytes (`TIFFClientOpenExt`, no
/// temporary file) or written into a growing buffer, with libtiff's errors
/// and warnings collected for the call instead of printed.
///
/// Each handle gets its own error and warning handlers (libtiff 4.5's
/// `TIFFOpenOptions`), which keep the messages for the error libtiff's
/// failure becomes. libtiff also reports a few errors through its
/// process-wide handlers only; the first use of this type sets those to
/// none, so libtiff never writes to the standard error of a process that
/// uses Imago.
enum TIFFMemory {
    /// Runs `body` with a handle over `data` that reads its first
    /// directory, no single allocation inside libtiff larger than
    /// `maximumAllocation` bytes.
    ///
    /// - Throws: ``CodecError`` (libtiff's), when libtiff cannot open the
    ///   data; what `body` throws.
    static func reading<Result>(_ data: Data, maximumAllocation: Int, _ body: (OpaquePointer, TIFFStream) throws -> Result) throws -> Result {
        _ = silenceProcessWideHandlers
        return try data.withUnsafeBytes { bytes in
            let stream = TIFFStream(source: bytes)
            return try withExtendedLifetime(stream) {
                let handle = try open(stream, mode: "rm", maximumAllocation: maximumAllocation)
                defer { TIFFClose(handle) }
                return try body(handle, stream)
            }
        }
    }

    /// The file `body` writes through a handle (BigTIFF with `bigTIFF`).
    ///
    /// - Throws: ``CodecError`` (libtiff's), when libtiff fails; what `body` throws.
    static func writing(bigTIFF: Bool, _ body: (OpaquePointer, TIFFStream) throws -> Void) throws -> Data {
        _ = silenceProcessWideHandlers
        let stream = TIFFStream(source: nil)
        try withExtendedLifetime(stream) {
            let handle = try open(stream, mode: bigTIFF ? "w8" : "w", maximumAllocation: 0)
            do {
                try body(handle, stream)
            } catch {
                TIFFClose(handle)
                throw error
            }
            // Closing writes the last directory; an error there is libtiff's.
            TIFFClose(handle)
            if let message = stream.errors.first { throw CodecError.libtiff(.call("TIFFClose", message: message)) }
        }
        return Data(stream.sink)
    }

    /// Sets libtiff's process-wide error and warning handlers to none, once.
    private static let silenceProcessWideHandlers: Void = {
        TIFFSetErrorHandler(nil)
        TIFFSetWarningHandler(nil)
        TIFFSetErrorHandlerExt(nil)
        TIFFSetWarningHandlerExt(nil)
    }()

    private static func open(_ stream: TIFFStream, mode: String, maximumAllocation: Int) throws -> OpaquePointer {
        guard let options = TIFFOpenOptionsAlloc() else { throw CodecError.libtiff(.call("TIFFOpenOptionsAlloc", message: "out of memory")) }
        defer { TIFFOpenOptionsFree(options) }
        let context = Unmanaged.passUnretained(stream).toOpaque()
        TIFFOpenOptionsSetErrorHandlerExtR(options, { _, context, module, format, arguments in
            TIFFStream.from(context)?.errors.append(TIFFStream.message(module, format, arguments))
            return 1   // handled: libtiff's process-wide handlers are not called
        }, context)
        TIFFOpenOptionsSetWarningHandlerExtR(options, { _, context, module, format, arguments in
            TIFFStream.from(context)?.warnings.append(TIFFStream.message(module, format, arguments))
            return 1
        }, context)
        if maximumAllocation > 0 { TIFFOpenOptionsSetMaxSingleMemAlloc(options, tmsize_t(maximumAllocation)) }
        let handle = TIFFClientOpenExt("memory", mode, context, TIFFStream.read, TIFFStream.write, TIFFStream.seek,
                                       TIFFStream.close, TIFFStream.size, nil, nil, options)
        guard let handle else {
            throw CodecError.libtiff(.call("TIFFClientOpen", message: stream.errors.first ?? "not a TIFF file libtiff can open"))
        }
        return handle
    }
}

/// The bytes a libtiff handle reads (`source`) or writes (`sink`), its
/// position, and the messages its handlers collected. One handle's, for
/// one call on one thread.
final class TIFFStream {
    /// The file being read; `nil` when writing.
    let source: UnsafeRawBufferPointer?
    /// The file being written.
    var sink: [UInt8] = []
    /// Where the next read or write starts.
    var position = 0
    /// libtiff's error messages, in order.
    var errors: [String] = []
    /// libtiff's warnings, in order.
    var warnings: [String] = []

    init(source: UnsafeRawBufferPointer?) {
        self.source = source
    }

    /// The number of bytes in the file.
    var count: Int { source?.count ?? sink.count }

    static func from(_ context: UnsafeMutableRawPointer?) -> TIFFStream? {
        context.map { Unmanaged<TIFFStream>.fromOpaque($0).takeUnretainedValue() }
    }

    /// A libtiff message, formatted (`module: text`).
    static func message(_ module: UnsafePointer<CChar>?, _ format: UnsafePointer<CChar>?, _ arguments: CVaListPointer?) -> String {
        guard let format, let arguments else { return "no message" }
        var buffer = [CChar](repeating: 0, count: 512)
        _ = vsnprintf(&buffer, buffer.count, format, arguments)
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return module.map { "\(String(cString: $0)): \(text)" } ?? text
    }

    static let read: TIFFReadWriteProc = { context, buffer, size in
        guard let stream = from(context), let source = stream.source, let buffer, size >= 0 else { return -1 }
        let count = min(Int(size), max(0, source.count - stream.position))
        if count > 0 { memcpy(buffer, source.baseAddress! + stream.position, count) }
        stream.position += count
        return tmsize_t(count)
    }

    static let write: TIFFReadWriteProc = { context, buffer, size in
        guard let stream = from(context), stream.source == nil, let buffer, size >= 0 else { return -1 }
        let end = stream.position + Int(size)
        if end > stream.sink.count { stream.sink.append(contentsOf: repeatElement(0, count: end - stream.sink.count)) }
        stream.sink.withUnsafeMutableBytes { sink in
            _ = memcpy(sink.baseAddress! + stream.position, buffer, Int(size))
        }
        stream.position = end
        return size
    }

    static let seek: TIFFSeekProc = { context, offset, whence in
        guard let stream = from(context) else { return toff_t.max }
        let base = switch whence {
        case SEEK_CUR: stream.position
        case SEEK_END: stream.count
        default: 0
        }
        let (target, overflow) = base.addingReportingOverflow(Int(truncatingIfNeeded: offset))
        // A read may seek past the end (its reads then return nothing); a write never further than 4 GB ahead.
        guard !overflow, target >= 0, target <= max(stream.count, 0) + (stream.source == nil ? Int(UInt32.max) : Int.max / 2) else {
            return toff_t.max
        }
        stream.position = target
        return toff_t(target)
    }

    static let close: TIFFCloseProc = { _ in 0 }

    static let size: TIFFSizeProc = { context in
        toff_t(from(context)?.count ?? 0)
    }
}
