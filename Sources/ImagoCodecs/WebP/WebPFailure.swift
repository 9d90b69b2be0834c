import CWebP

/// Every way a libwebp call can fail. ``CodecError/init(_:)`` is the one
/// place these become ``CodecError`` values.
///
/// `WebPGetFeatures` reports a `VP8StatusCode`; the other calls we make
/// (`WebPDecodeRGBAInto`, `WebPDemux`, `WebPAnimDecoderNew`,
/// `WebPEncodeRGBA`, …) only return `NULL` or `0`, so each of those
/// failures gets a negative code of ours.
enum WebPFailure: Equatable {
    /// `WebPGetFeatures` returned a status other than `VP8_STATUS_OK`.
    case status(VP8StatusCode)
    /// `WebPDecodeRGBAInto` or `WebPDecodeRGBInto` returned `NULL`.
    case stillDecodingFailed
    /// `WebPDemux` could not parse the container of an animation.
    case containerUnreadable
    /// An animation frame's rectangle does not lie inside the canvas.
    case frameOutsideCanvas(frame: Int)
    /// `WebPAnimDecoderOptionsInit`, `WebPAnimDecoderNew` or
    /// `WebPAnimDecoderGetInfo` failed, or disagreed with the demuxer.
    case animationDecoderFailed
    /// `WebPAnimDecoderGetNext` failed on a frame.
    case frameDecodingFailed(frame: Int)
    /// A row of the image is too long for libwebp's 32-bit stride.
    case rowTooLong(width: Int)
    /// A `WebPEncode…` function returned no data.
    case encodingFailed

    /// Throws `.status(status)` unless `status` is `VP8_STATUS_OK`.
    static func check(_ status: VP8StatusCode) throws {
        guard status != VP8_STATUS_OK else { return }
        throw CodecError(.status(status))
    }
}

extension CodecError {
    /// The library name used in every libwebp error.
    static let libwebp = "libwebp"

    /// Maps a libwebp failure to a codec error: `VP8StatusCode` values keep
    /// their number (1…7); the failures of calls without a status code have
    /// negative codes.
    init(_ failure: WebPFailure) {
        let (code, message): (Int, String)
        switch failure {
        case .status(let status):
            code = Int(status.rawValue)
            message = switch status {
            case VP8_STATUS_OUT_OF_MEMORY: "out of memory"
            case VP8_STATUS_INVALID_PARAM: "invalid parameter (no data?)"
            case VP8_STATUS_BITSTREAM_ERROR: "bitstream error: not a valid WebP header"
            case VP8_STATUS_UNSUPPORTED_FEATURE: "unsupported feature"
            case VP8_STATUS_SUSPENDED: "decoding suspended"
            case VP8_STATUS_USER_ABORT: "decoding aborted"
            case VP8_STATUS_NOT_ENOUGH_DATA: "not enough data: the file is truncated"
            default: "unknown status"
            }
        case .stillDecodingFailed:
            (code, message) = (-1, "the bitstream could not be decoded (corrupt or truncated)")
        case .containerUnreadable:
            (code, message) = (-2, "the demuxer could not parse the animation (corrupt or truncated)")
        case .frameOutsideCanvas(let frame):
            (code, message) = (-3, "frame \(frame) does not lie inside the canvas")
        case .animationDecoderFailed:
            (code, message) = (-4, "the animation decoder could not be created")
        case .frameDecodingFailed(let frame):
            (code, message) = (-5, "frame \(frame) of the animation could not be decoded")
        case .rowTooLong(let width):
            (code, message) = (-6, "a row of \(width) pixels is too long for libwebp")
        case .encodingFailed:
            (code, message) = (-7, "the encoder returned no data")
        }
        self.init(library: Self.libwebp, code: code, message: message)
    }
}
