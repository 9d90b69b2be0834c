/// Every way Imago's own BMP and ICO readers refuse a file.
/// ``CodecError/bmp(_:)`` and ``CodecError/ico(_:)`` are the one place
/// these become ``CodecError`` values.
enum BitmapFailure: Error {
    /// The data ends before something the header promises: `what` names it.
    case truncated(_ what: String)
    /// A valid file Imago does not read: an unknown bit depth or header
    /// size, JPEG or PNG compression, Huffman or RLE24 (OS/2).
    case unsupported(_ what: String)
    /// A field that breaks the format: a zero width, a mask that is not
    /// one run of bits, a compression that does not fit the bit depth.
    case invalid(_ what: String)

    /// The code and message a ``CodecError`` carries.
    var codeAndMessage: (code: Int, message: String) {
        switch self {
        case .truncated(let what): (1, "the data ends before \(what)")
        case .unsupported(let what): (2, "unsupported: \(what)")
        case .invalid(let what): (3, "invalid: \(what)")
        }
    }
}

extension CodecError {
    /// The library name of every error of Imago's BMP reader.
    static let bmpReaderName = "imago-bmp"
    /// The library name of every error of Imago's ICO reader.
    static let icoReaderName = "imago-ico"

    /// Maps a failure of the BMP reader to a codec error.
    static func bmp(_ failure: BitmapFailure) -> CodecError {
        let (code, message) = failure.codeAndMessage
        return CodecError(library: bmpReaderName, code: code, message: message)
    }

    /// Maps a failure of the ICO reader (its directory, or a BMP image
    /// inside it) to a codec error.
    static func ico(_ failure: BitmapFailure) -> CodecError {
        let (code, message) = failure.codeAndMessage
        return CodecError(library: icoReaderName, code: code, message: message)
    }
}
