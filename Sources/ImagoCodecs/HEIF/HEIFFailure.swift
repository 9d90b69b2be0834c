import CHeif

/// Every way a libheif call can fail. ``CodecError/libheif(_:)`` is the one
/// place these become ``CodecError`` values (decoder and encoder alike).
enum HEIFFailure {
    /// A call returned a `heif_error` whose code is not `heif_error_Ok`:
    /// its code, subcode and message, copied when the call returned.
    case call(code: Int, subcode: Int, message: String)
    /// The decoded image has no interleaved plane, or one of another size
    /// than the header declared.
    case unexpectedImage(width: Int, height: Int)
    /// libheif reported success but gave no primary image handle.
    case noPrimaryImage
    /// The writer returned no data.
    case encodingFailed

    /// Throws `.call` unless `error` reports success.
    static func check(_ error: heif_error) throws {
        guard error.code != heif_error_Ok else { return }
        let message = error.message.map { String(cString: $0) } ?? "no message"
        throw CodecError.libheif(.call(code: Int(error.code.rawValue), subcode: Int(error.subcode.rawValue), message: message))
    }
}

extension CodecError {
    /// The library name used in every libheif error.
    static let libheifName = "libheif"

    /// Maps a libheif failure to a codec error: a failed call keeps
    /// libheif's code (times 1,000, plus the subcode, so that both survive
    /// in one number) and message; the other failures have negative codes.
    static func libheif(_ failure: HEIFFailure) -> CodecError {
        let (code, message): (Int, String) = switch failure {
        case .call(let code, let subcode, let message): (code * 1_000 + subcode, message)
        case .unexpectedImage(let width, let height): (-1, "the decoded image is not the \(width)x\(height) RGB image the header declared")
        case .noPrimaryImage: (-2, "the file has no primary image")
        case .encodingFailed: (-3, "the encoder returned no data")
        }
        return CodecError(library: libheifName, code: code, message: message)
    }
}
