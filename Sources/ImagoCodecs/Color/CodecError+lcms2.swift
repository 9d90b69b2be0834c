extension CodecError {
    /// A colour profile lcms2 cannot use for an image: `detail` says why
    /// (unreadable, another colour space than the pixels', no transform).
    static func lcms2(unusableProfile detail: String) -> CodecError {
        CodecError(library: "lcms2", code: -1, message: "unusable colour profile: \(detail)")
    }
}
