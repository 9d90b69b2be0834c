import CAvif

/// Every way a libavif call can fail. ``CodecError/libavif(_:)`` is the one
/// place these become ``CodecError`` values.
enum AVIFFailure {
    /// A call returned an `avifResult` other than `AVIF_RESULT_OK`.
    case call(Call, avifResult)
    /// `avifDecoderCreate` returned `NULL`.
    case outOfMemory
    /// The file parsed but holds no image.
    case noImage
    /// A decoded frame, turned upright, is not the size the header declared.
    case unexpectedImage(width: Int, height: Int)

    /// The calls that report an `avifResult`.
    enum Call: String {
        case input = "avifDecoderSetIOMemory"
        case parse = "avifDecoderParse"
        case nextImage = "avifDecoderNextImage"
        case yuvToRGB = "avifImageYUVToRGB"
    }

    /// Throws `.call(call, result)` unless `result` is `AVIF_RESULT_OK`.
    static func check(_ result: avifResult, _ call: Call) throws {
        guard result != AVIF_RESULT_OK else { return }
        throw CodecError.libavif(.call(call, result))
    }
}

extension CodecError {
    /// Maps a libavif failure to a codec error: a failed call keeps
    /// libavif's result code and message; the other failures have negative codes.
    static func libavif(_ failure: AVIFFailure) -> CodecError {
        let (code, message): (Int, String) = switch failure {
        case .call(let call, let result): (Int(result.rawValue), "\(call.rawValue): \(String(cString: avifResultToString(result)))")
        case .outOfMemory: (-1, "the decoder could not be created (out of memory)")
        case .noImage: (-2, "the file holds no image")
        case .unexpectedImage(let width, let height): (-3, "a decoded frame is not the \(width)x\(height) image the header declared")
        }
        return CodecError(library: "libavif", code: code, message: message)
    }
}
