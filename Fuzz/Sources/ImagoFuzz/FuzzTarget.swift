import Foundation
import Imago
import ImagoCodecs

/// The decoder under test, chosen by `IMAGO_FUZZ_FORMAT` (any `ImageFormat`:
/// jpeg, png, gif, webp, avif, heic, jxl, bmp, ico, tiff).
///
/// The codec's table is driven directly (no sniffing), so mutations of the
/// magic number still reach the library.
let decoder: CodecDecoder = {
    let name = ProcessInfo.processInfo.environment["IMAGO_FUZZ_FORMAT"] ?? "png"
    guard let format = ImageFormat(rawValue: name) else {
        fatalError("IMAGO_FUZZ_FORMAT must be one of \(ImageFormat.allCases.map(\.rawValue)), not \(name)")
    }
    return ImageDecoders.decoder(for: format)
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

