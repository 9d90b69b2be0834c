/// The seam between the decoders and a colour-management library: how an
/// image whose pixels are in an embedded profile's colour space becomes sRGB.
///
/// ``CodecDecoder`` calls ``convertToSRGB`` once per decode, after any
/// thumbnail scaling (fewer pixels to convert), when the file embeds a
/// profile and ``ImageDecodingOptions/colorManagement`` is
/// ``ImageDecodingOptions/ColorManagement/convertToSRGB``. `ImagoCodecs`
/// provides the production table over Little CMS (`ColorConversionFunctions.lcms2`);
/// `ImagoTesting` has a spy (`SpyColorConversion`).
///
/// ```swift
/// let decoder = CodecDecoder(format: .png, functions: .png, colorConversion: .lcms2)
/// ```
public struct ColorConversionFunctions: Sendable {
    /// Converts every frame of `image`, whose pixels are in `profile`'s
    /// colour space, to sRGB, keeping size, pixel format and alpha. Throws
    /// when the profile cannot be used for these pixels; the decoder then
    /// keeps the pixels as stored.
    public var convertToSRGB: @Sendable (_ image: Image, _ profile: ColorProfile) throws -> Image

    /// Creates a table from its function.
    public init(convertToSRGB: @escaping @Sendable (_ image: Image, _ profile: ColorProfile) throws -> Image) {
        self.convertToSRGB = convertToSRGB
    }
}
