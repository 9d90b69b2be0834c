import Foundation
import Imago
import ImagoCodecs
import LoopbackServer

/// Generated photo-like images in several formats and sizes, served under
/// many distinct paths (every path is its own download and decode).
public struct SampleImages: Sendable {
    /// The encoded images: bytes, content type, file extension.
    public let variants: [(data: Data, contentType: String, fileExtension: String)]

    /// Parses `WxH`.
    public static func size(_ text: String?) -> (width: Int, height: Int)? {
        guard let parts = text?.lowercased().split(separator: "x"), parts.count == 2,
              let width = Int(parts[0]), let height = Int(parts[1]), width > 0, height > 0 else { return nil }
        return (width, height)
    }

    /// Photo-like JPEGs (with a few WebP and PNG), or only JPEGs of `photoSize`.
    public static func make(photoSize: (width: Int, height: Int)? = nil) throws -> SampleImages {
        if let photoSize {
            let image = photo(width: photoSize.width, height: photoSize.height, seed: 7)
            return SampleImages(variants: [(try ImageEncoders.jpeg(quality: 85).encode(image), "image/jpeg", "jpg")])
        }
        var variants: [(Data, String, String)] = []
        for (index, (width, height)) in [(1200, 900), (1000, 750), (800, 600), (640, 480), (1600, 1200)].enumerated() {
            let image = photo(width: width, height: height, seed: index)
            variants.append((try ImageEncoders.jpeg(quality: 80).encode(image), "image/jpeg", "jpg"))
            if index < 2 { variants.append((try ImageEncoders.webp(quality: 75).encode(image), "image/webp", "webp")) }
            if index == 3 { variants.append((try ImageEncoders.png().encode(image.resized(width: 480, height: 360)), "image/png", "png")) }
        }
        return SampleImages(variants: variants)
    }

    /// `count` distinct paths, cycling through the variants.
    public func paths(count: Int) -> [String] {
        (0..<count).map { "/img/\($0)-\($0 % variants.count).\(variants[$0 % variants.count].fileExtension)" }
    }

    /// Answers `/img/N-V.ext` with variant V.
    public var handler: LoopbackServer.Handler {
        let variants = self.variants
        return { request in
            guard request.path.hasPrefix("/img/"),
                  let dash = request.path.lastIndex(of: "-"),
                  let dot = request.path.lastIndex(of: "."),
                  let variant = Int(request.path[request.path.index(after: dash)..<dot]),
                  variants.indices.contains(variant) else { return nil }
            let (data, contentType, _) = variants[variant]
            return ServedResponse(headers: [("Content-Type", contentType), ("Cache-Control", "max-age=3600")], body: data)
        }
    }

    /// A photo-like picture: smooth colour fields with fine detail.
    public static func photo(width: Int, height: Int, seed: Int) -> Image {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        var state = UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 | 1
        for y in 0..<height {
            for x in 0..<width {
                state ^= state << 13; state ^= state >> 7; state ^= state << 17
                let noise = Int(state % 24) - 12
                let base = (y * width + x) * 3
                let fx = Double(x) / Double(width), fy = Double(y) / Double(height)
                pixels[base] = UInt8(clamping: Int(128 + 100 * sin(fx * 7 + Double(seed))) + noise)
                pixels[base + 1] = UInt8(clamping: Int(128 + 100 * cos(fy * 5 + fx * 3)) + noise)
                pixels[base + 2] = UInt8(clamping: Int(128 + 90 * sin((fx + fy) * 11)) + noise)
            }
        }
        return Image(width: width, height: height, pixelFormat: .rgb8, pixels: pixels)
    }
}
