import CGif

extension CodecError {
    /// Maps a giflib error code to a ``CodecError``: the one place where
    /// giflib's codes become errors.
    ///
    /// giflib returns `GIF_ERROR` without setting a code on a few short
    /// reads; that is reported as code 0. `detail` adds what Imago itself
    /// found wrong (for checks giflib does not make).
    static func giflib(_ code: Int32, detail: String? = nil) -> CodecError {
        let text = GifErrorString(code).map { String(cString: $0) } ?? "unspecified failure (giflib set no error code)"
        return CodecError(library: "giflib", code: Int(code), message: detail.map { "\(text): \($0)" } ?? text)
    }
}
