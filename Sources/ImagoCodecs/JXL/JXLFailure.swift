import CJxl

/// Every way a libjxl call can fail. ``CodecError/libjxl(_:)`` is the one
/// place these become ``CodecError`` values.
///
/// libjxl reports only `JXL_DEC_ERROR`, without a reason, so each call
/// that can fail gets a code of ours.
enum JXLFailure {
    /// `JxlDecoderCreate` returned `NULL`.
    case outOfMemory
    /// `JxlDecoderProcessInput` reported `JXL_DEC_ERROR`: the codestream or
    /// container is invalid.
    case corrupt
    /// `JxlDecoderProcessInput` needed more input than the file holds.
    case truncated
    /// The headers declared no pixels or no frames.
    case noImage
    /// The decoder's output size differs from the header's.
    case unexpectedImage(width: Int, height: Int)
    /// One of the setup or query calls failed.
    case call(Call)

    /// The setup and query calls, for ``call(_:)``.
    enum Call: String {
        case subscribe = "JxlDecoderSubscribeEvents"
        case input = "JxlDecoderSetInput"
        case basicInfo = "JxlDecoderGetBasicInfo"
        case frameHeader = "JxlDecoderGetFrameHeader"
        case colorProfile = "JxlDecoderGetColorAsICCProfile"
        case outputBuffer = "JxlDecoderSetImageOutBuffer"
    }

    /// Throws `.call(call)` unless `status` is `JXL_DEC_SUCCESS`.
    static func check(_ status: JxlDecoderStatus, _ call: Call) throws {
        guard status != JXL_DEC_SUCCESS else { return }
        throw CodecError.libjxl(.call(call))
    }
}

extension CodecError {
    /// Maps a libjxl failure to a codec error with a negative code of ours.
    static func libjxl(_ failure: JXLFailure) -> CodecError {
        let (code, message): (Int, String) = switch failure {
        case .outOfMemory: (-1, "the decoder could not be created (out of memory)")
        case .corrupt: (-2, "the codestream is invalid (corrupt or not JPEG XL)")
        case .truncated: (-3, "the file is truncated")
        case .noImage: (-4, "the headers declare no image")
        case .unexpectedImage(let width, let height): (-5, "the decoder's output is not the \(width)x\(height) image the header declared")
        case .call(let call): (-6, "\(call.rawValue) failed")
        }
        return CodecError(library: "libjxl", code: code, message: message)
    }
}
