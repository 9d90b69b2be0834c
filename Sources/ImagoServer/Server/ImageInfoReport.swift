#if Server
import Foundation
import Imago
import ImagoCodecs

/// What `GET /SIGNATURE/info/plain/SOURCE` answers: the source described
/// from its header and a small decode, as JSON.
///
/// ```json
/// {"alpha":false,"average_color":"#8a7f6c","blurhash":"LEHV6nWB2yk8pyo0adR*.7kCMdnj",
///  "bytes":48213,"color_profile":"Display P3","dominant_color":"#9a8c70","durations":[],
///  "format":"jpeg","frames":1,"height":3000,"loop_count":1,"orientation":6,
///  "thumbhash":"3OcRJYB4d3h/iIeHeEh3eIhw+j3A","width":4000}
/// ```
///
/// `width` and `height` are as the image is shown (after `orientation`,
/// the EXIF value the file declares); `durations` are the frames' in
/// seconds (empty for a still image); `color_profile` is the name of the
/// embedded profile (`null` for sRGB). The colours, the BlurHash (4x3
/// components) and the ThumbHash are computed on the image decoded to fit
/// 100x100 and converted to sRGB; the average weighs pixels by their alpha,
/// the dominant colour is the mean of the most common of 4,096 colour bins
/// (4 bits a channel) among pixels at least half opaque.
struct ImageInfoReport: Encodable, Sendable {
    let format: String
    let width: Int
    let height: Int
    let orientation: Int
    let frames: Int
    let durations: [Double]
    let loopCount: Int
    let colorProfile: String?
    let alpha: Bool
    let bytes: Int
    let averageColor: String
    let dominantColor: String
    let blurhash: String
    let thumbhash: String

    enum CodingKeys: String, CodingKey {
        case format, width, height, orientation, frames, durations, alpha, bytes, blurhash, thumbhash
        case loopCount = "loop_count", colorProfile = "color_profile", averageColor = "average_color", dominantColor = "dominant_color"
    }

    /// Every key is written, `color_profile` as `null` for sRGB, so clients see one shape.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(format, forKey: .format)
        try container.encode(width, forKey: .width)
        try container.encode(height, forKey: .height)
        try container.encode(orientation, forKey: .orientation)
        try container.encode(frames, forKey: .frames)
        try container.encode(durations, forKey: .durations)
        try container.encode(loopCount, forKey: .loopCount)
        try container.encode(colorProfile, forKey: .colorProfile)
        try container.encode(alpha, forKey: .alpha)
        try container.encode(bytes, forKey: .bytes)
        try container.encode(averageColor, forKey: .averageColor)
        try container.encode(dominantColor, forKey: .dominantColor)
        try container.encode(blurhash, forKey: .blurhash)
        try container.encode(thumbhash, forKey: .thumbhash)
    }

    /// Describes the encoded image `data`; `liftsPNGChunkLimits` as
    /// ``ImageServerConfiguration/liftsPNGChunkLimits``.
    ///
    /// - Throws: `ImageDecodingError` when it cannot be read.
    init(describing data: Data, liftsPNGChunkLimits: Bool = false) throws {
        let options = ImageDecodingOptions(thumbnail: Thumbnail(width: 100, height: 100), liftsPNGChunkLimits: liftsPNGChunkLimits)
        // Decoding first: it throws the registry's typed error for bytes no codec reads.
        let small = try ImageDecoders.all.decode(data, options: options)
        guard let sniffed = ImageFormat(sniffing: data), let codec = ImageDecoders.all.decoders[sniffed] as? CodecDecoder else {
            throw ImageDecodingError(.unsupportedFormat, message: "no codec reads the header of these bytes")
        }
        let info = try codec.info(for: data, options: options)
        format = info.format.rawValue
        (width, height) = info.orientation.swapsDimensions ? (info.height, info.width) : (info.width, info.height)
        orientation = info.orientation.rawValue
        frames = info.frameCount
        durations = small.isAnimated ? small.frames.map { duration in duration.duration.flatMap { $0.isFinite ? $0 : nil } ?? 0 } : []
        loopCount = small.loopCount
        colorProfile = info.colorProfile.map { $0.name ?? $0.colorSpace ?? "unnamed" }
        alpha = small.pixelFormat.hasAlpha
        bytes = data.count
        let rgba = small.converted(to: .rgba8)
        (averageColor, dominantColor) = Self.colors(of: rgba)
        blurhash = small.blurHash()
        thumbhash = small.thumbHash().base64EncodedString()
    }

    /// The alpha-weighted average and the dominant colour of an RGBA image, as `#rrggbb`.
    private static func colors(of image: Image) -> (average: String, dominant: String) {
        let pixels = image.pixels
        var sums = (r: 0, g: 0, b: 0, weight: 0)
        var bins = [Int: (count: Int, r: Int, g: Int, b: Int)]()
        for index in stride(from: 0, to: image.width * image.height * 4, by: 4) {
            let (r, g, b, a) = (Int(pixels[index]), Int(pixels[index + 1]), Int(pixels[index + 2]), Int(pixels[index + 3]))
            sums = (sums.r + r * a, sums.g + g * a, sums.b + b * a, sums.weight + a)
            guard a >= 128 else { continue }
            let bin = (r >> 4) << 8 | (g >> 4) << 4 | b >> 4
            let old = bins[bin] ?? (0, 0, 0, 0)
            bins[bin] = (old.count + 1, old.r + r, old.g + g, old.b + b)
        }
        func hex(_ r: Int, _ g: Int, _ b: Int) -> String { String(format: "#%02x%02x%02x", r, g, b) }
        let average = sums.weight > 0
            ? hex((sums.r + sums.weight / 2) / sums.weight, (sums.g + sums.weight / 2) / sums.weight, (sums.b + sums.weight / 2) / sums.weight)
            : hex(0, 0, 0)
        // Ties go to the lower bin, so the answer does not depend on the dictionary's order.
        guard let top = bins.max(by: { $0.value.count < $1.value.count || ($0.value.count == $1.value.count && $0.key > $1.key) }) else {
            return (average, average)
        }
        let n = top.value.count
        return (average, hex((top.value.r + n / 2) / n, (top.value.g + n / 2) / n, (top.value.b + n / 2) / n))
    }

    /// The report as JSON, keys sorted.
    ///
    /// - Throws: `EncodingError` (not expected: the durations are finite).
    func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}
#endif
