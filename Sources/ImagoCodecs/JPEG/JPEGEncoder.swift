import CTurboJPEG
import Foundation
import Imago

/// Encodes the first frame of an image as JPEG, over libjpeg-turbo.
///
/// Colour images use 4:2:0 chroma subsampling below quality 90 and 4:4:4
/// from 90 up; gray images stay one channel. Alpha is dropped (JPEG has none).
/// An image's ``Image/colorProfile`` is embedded (`APP2` segments).
public struct JPEGEncoder: ImageEncoding {
    /// The quality used when none is given: 85. The image server and
    /// `imago fetch` use it too (``ImageEncoders/defaultQuality(for:)``).
    public static let defaultQuality = 85

    /// The quality, 1 (smallest) to 100 (best). Default: ``defaultQuality``.
    public var quality: Int
    /// Whether to write a progressive JPEG (`SOF2`, scans of increasing
    /// detail) rather than a baseline one (`SOF0`). Default: `false`.
    /// imgproxy's `IMGPROXY_JPEG_PROGRESSIVE`.
    public var progressive: Bool
    /// Whether to embed the sRGB profile when the image has no profile of
    /// its own (its pixels are sRGB). Default: `false`, as most web images.
    public var embedsSRGBProfile: Bool

    /// Creates a JPEG encoder.
    public init(quality: Int = JPEGEncoder.defaultQuality, progressive: Bool = false, embedsSRGBProfile: Bool = false) {
        self.quality = quality
        self.progressive = progressive
        self.embedsSRGBProfile = embedsSRGBProfile
    }

    public var format: ImageFormat { .jpeg }

    public func encode(_ image: Image) throws -> Data {
        guard (1...100).contains(quality) else {
            throw ImageEncodingError(.unsupportedImage, format: .jpeg, message: "quality \(quality) is outside 1...100")
        }
        guard image.width <= 65_535, image.height <= 65_535 else {
            throw ImageEncodingError(.unsupportedImage, format: .jpeg, message: "JPEG cannot hold \(image.width)x\(image.height)")
        }
        let isGray = image.pixelFormat == .gray8 || image.pixelFormat == .grayAlpha8
        let source = image.converted(to: isGray ? .gray8 : .rgb8)
        let pixelFormat = isGray ? TJPF_GRAY : TJPF_RGB
        let subsampling = isGray ? TJSAMP_GRAY : quality >= 90 ? TJSAMP_444 : TJSAMP_420
        guard let handle = tjInitCompress() else {
            let error = CodecError.libjpegTurbo(.noHandle)
            throw ImageEncodingError(.encodingFailed, format: .jpeg, message: error.message, underlying: error)
        }
        defer { tjDestroy(handle) }
        var output: UnsafeMutablePointer<UInt8>?
        var length: UInt = 0
        defer { if let output { tjFree(output) } }
        let status = source.pixels.withUnsafeBufferPointer { pixels in
            tjCompress2(
                handle, pixels.baseAddress, Int32(source.width), Int32(source.bytesPerRow), Int32(source.height),
                Int32(pixelFormat.rawValue), &output, &length, Int32(subsampling.rawValue), Int32(quality),
                progressive ? TJFLAG_PROGRESSIVE : 0
            )
        }
        guard status == 0, let output else {
            let error = CodecError.libjpegTurbo(.call(handle))
            throw ImageEncodingError(.encodingFailed, format: .jpeg, message: error.message, underlying: error)
        }
        let encoded = Data(bytes: output, count: Int(length))
        guard let profile = EmbeddedProfile.profile(for: image, embedsSRGB: embedsSRGBProfile) else { return encoded }
        return try EmbeddedProfile.inserting(profile, intoJPEG: encoded)
    }
}
