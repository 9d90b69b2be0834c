import CSpng

extension CodecError {
    /// Maps a libspng status code to a ``CodecError``: the one place where
    /// libspng's codes become errors (decoder and encoder alike).
    ///
    /// `detail` adds what Imago itself saw, for the few failures libspng
    /// reports without setting a status (a context that could not be
    /// allocated is `SPNG_EMEM`).
    static func libspng(_ status: Int32, detail: String? = nil) -> CodecError {
        let text = String(cString: spng_strerror(status))
        return CodecError(library: "libspng", code: Int(status), message: detail.map { "\(text): \($0)" } ?? text)
    }
}
