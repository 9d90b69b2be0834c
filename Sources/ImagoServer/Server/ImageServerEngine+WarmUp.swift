#if Server
import Foundation
import Imago
import ImagoCodecs

/// A render of each common source format before the first request, so
/// that the first requests do not pay for the first use of the codecs:
/// code paged in, tables and lookups built, the allocator's arenas grown.
extension ImageServerEngine {
    /// The warm-up's sources: a photo-like JPEG and PNG, made in memory.
    static let warmUpSources: [Data] = makeWarmUpSources()

    private static func makeWarmUpSources() -> [Data] {
        let (width, height) = (800, 600)
        var noise = UInt64.random(in: 0...UInt64.max)
        let pixels = [UInt8](unsafeUninitializedCapacity: width * height * 3) { buffer, count in
            // Smooth gradients with a little grain: what a photo costs a codec.
            for y in 0..<height {
                for x in 0..<width {
                    noise = noise &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    let grain = Int(noise >> 61)
                    let index = (y * width + x) * 3
                    buffer[index] = UInt8(truncatingIfNeeded: x * 255 / width + grain)
                    buffer[index + 1] = UInt8(truncatingIfNeeded: y * 255 / height + grain)
                    buffer[index + 2] = UInt8(truncatingIfNeeded: (x + y) * 127 / (width + height) + grain)
                }
            }
            count = width * height * 3
        }
        let photo = Image(width: width, height: height, pixelFormat: .rgb8, pixels: pixels)
        let encoders: [any ImageEncoding] = [ImageEncoders.jpeg(quality: 90), ImageEncoders.png(compression: .fast)]
        return encoders.compactMap { try? $0.encode(photo) }
    }

    /// Fits each warm-up source to 256 px and encodes it as a JPEG, once on
    /// each worker, on the pipeline's work queue and decoders; returns what
    /// the renders made (for each source, the last worker's output).
    func warmUp() async -> [ImageInfo] {
        let (decoder, workQueue) = (pipeline.configuration.decoder, pipeline.configuration.workQueue)
        let options = ImageDecodingOptions(thumbnail: Thumbnail(maximumPixelSize: 256))
        return await withTaskGroup(of: [ImageInfo].self) { group in
            for _ in 0..<configuration.workers {
                group.addTask {
                    (try? await workQueue.perform {
                        try Self.warmUpSources.map { source in
                            let thumbnail = try ImageEncoders.jpeg(quality: 80).encode(try decoder.decode(source, options: options))
                            return try ImageDecoders.info(for: thumbnail)
                        }
                    }) ?? []
                }
            }
            var made: [ImageInfo] = []
            for await outputs in group where outputs.count == Self.warmUpSources.count { made = outputs }
            return made
        }
    }
}
#endif
