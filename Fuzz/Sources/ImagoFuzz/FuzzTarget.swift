import Foundation
import Imago
import ImagoCodecs

/// The decoder under test, chosen by `IMAGO_FUZZ_FORMAT` (jpeg, png, gif, webp).
///
/// The codec's table is driven directly (no sniffing), so mutations of the
/// magic number still reach the library.
let decoder: CodecDecoder = {
    let name = ProcessInfo.processInfo.environment["IMAGO_FUZZ_FORMAT"] ?? "png"
    switch name {
    case "jpeg": return ImageDecoders.jpeg()
    case "png": return ImageDecoders.png()
    case "gif": return ImageDecoders.gif()
    case "webp": return ImageDecoders.webp()
    default: fatalError("IMAGO_FUZZ_FORMAT must be jpeg, png, gif or webp, not \(name)")
    }
}()

/// Small limits keep each run fast; the limits themselves are part of what is fuzzed.
let options = ImageDecodingOptions(maximumPixelCount: 4_000_000, maximumFrameCount: 64)
let thumbnail = ImageDecodingOptions(maximumPixelCount: 4_000_000, maximumFrameCount: 64, frameIndex: 0, maximumPixelSize: 64)

/// libFuzzer's entry point: decode the input; any outcome but a crash is
/// fine, but an error that is not an `ImageDecodingError` is a bug.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = start.map { Data(bytes: $0, count: count) } ?? Data()
    for options in [options, thumbnail] {
        do {
            _ = try decoder.decode(data, options: options)
        } catch is ImageDecodingError {
        } catch {
            fatalError("untyped error: \(error)")
        }
    }
    return 0
}

