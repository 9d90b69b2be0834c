import CTurboJPEG

/// Every way a TurboJPEG call can fail. ``CodecError/libjpegTurbo(_:)``
/// is the one place these become ``CodecError`` values (decoder and
/// encoder alike).
enum TurboJPEGFailure {
    /// The last call on this handle failed: the handle holds the code
    /// (`TJERR_WARNING` or `TJERR_FATAL`) and the message.
    case call(tjhandle)
    /// `tjInitDecompress` or `tjInitCompress` returned `NULL`.
    case noHandle
    /// `tjDecompressHeader3` succeeded but found no image size, as for a
    /// tables-only datastream.
    case noFrameHeader
}

extension CodecError {
    /// Maps a TurboJPEG failure to a codec error: a failed call keeps the
    /// handle's code and message; the other failures have code -1.
    static func libjpegTurbo(_ failure: TurboJPEGFailure) -> CodecError {
        let (code, message): (Int, String) = switch failure {
        case .call(let handle): (Int(tjGetErrorCode(handle)), String(cString: tjGetErrorStr2(handle)))
        case .noHandle: (-1, String(cString: tjGetErrorStr2(nil)))
        case .noFrameHeader: (-1, "the data has no usable frame header")
        }
        return CodecError(library: "libjpeg-turbo", code: code, message: message)
    }
}
