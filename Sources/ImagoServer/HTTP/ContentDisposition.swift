#if Server
import Foundation

/// The `Content-Disposition` of an image, as imgproxy sends it: `inline`
/// (or `attachment`) with the path's `filename`, else the source's file
/// name, else `image`, and the output format's extension.
///
/// The name cannot break the header: quotes, backslashes and control
/// characters (a CR LF would start a header of its own) are
/// percent-encoded in `filename`, which stays ASCII; a name with other
/// characters also gets `filename*` (RFC 6266) with the name in UTF-8.
struct ContentDisposition: Sendable {
    let stem: String
    let attachment: Bool

    init(source: URL, filename: String?, attachment: Bool) {
        if let filename, !filename.isEmpty {
            stem = filename
        } else {
            // A path that ends in a slash names no file (imgproxy's fallback stem too).
            let endsInSlash = URLComponents(url: source, resolvingAgainstBaseURL: false)?.percentEncodedPath.hasSuffix("/") ?? false
            let last = endsInSlash ? "" : source.lastPathComponent
            let stem = last.contains(".") ? String(last[..<last.lastIndex(of: ".")!]) : last
            self.stem = stem.isEmpty || stem == "/" ? "image" : stem
        }
        self.attachment = attachment
    }

    /// The header's value for a file with `fileExtension` (`jpg`, `png`...;
    /// empty for none).
    func value(extension fileExtension: String) -> String {
        let name = fileExtension.isEmpty ? stem : stem + "." + fileExtension
        var ascii = ""
        var onlyASCII = true
        for scalar in name.unicodeScalars {
            switch scalar.value {
            case 0x20...0x7E where scalar != "\"" && scalar != "\\" && scalar != "%":
                ascii.unicodeScalars.append(scalar)
            case 0..<0x80:
                ascii += String(format: "%%%02X", scalar.value)
            default:
                onlyASCII = false
                ascii += "_"
            }
        }
        var value = (attachment ? "attachment" : "inline") + "; filename=\"\(ascii)\""
        if !onlyASCII {
            var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)..<Unicode.Scalar(128)))
            allowed.insert(charactersIn: "!#$&+-.^_`|~")
            value += "; filename*=UTF-8''" + (name.addingPercentEncoding(withAllowedCharacters: allowed) ?? ascii)
        }
        return value
    }
}

extension ProcessingOptions.OutputFormat {
    /// The usual file extension: `jpg`, `png`, `webp`, `avif`.
    var fileExtension: String { self == .jpeg ? "jpg" : rawValue }
}
#endif
