import CTurboJPEG
import Foundation
import Imago

extension CodecFunctions where State == JPEGState {
    /// The production table for JPEG, over libjpeg-turbo's TurboJPEG API
    /// (error codes only, no `setjmp` in Imago's code).
    ///
    /// `open` reads the frame header, the EXIF orientation and the ICC
    /// profile (`APP2` segments, reassembled). `makeImage`
    /// decodes grayscale JPEGs to `gray8` and everything else to `rgb8`
    /// (CMYK and YCCK are converted: through the file's CMYK profile with
    /// lcms2 when it has one, as no Imago pixel format holds inks, and the
    /// image is then tagged ``ColorProfile/sRGB``; otherwise naively,
    /// assuming Adobe's inverted CMYK), then
    /// turns the image upright as its EXIF orientation says. With a
    /// ``ImageDecodingOptions/thumbnail`` it uses libjpeg-turbo's DCT
    /// scaling: the smallest of the library's scaling factors (1/8 to 2)
    /// whose result still covers the thumbnail in either orientation. A
    /// corrupt-data *warning* is not an error, in the header or in the
    /// scans: the image is what libjpeg-turbo decodes, as browsers and
    /// Pillow show it. Bytes that libjpeg discards between the header's
    /// segments ("N extraneous bytes before marker": junk, stuffed `FF 00`,
    /// the tail of a segment whose length is short) are left out before
    /// decoding, which gives the same pixels; the image is
    /// ``Image/isPartial`` only when data is missing: the scans end before
    /// their last row ("premature end") or no end-of-image marker follows
    /// them, and the missing part is gray. Up to 1 KB of junk before the
    /// start-of-image marker (`FF D8 FF`) is skipped, as browsers do.
    public static var jpeg: CodecFunctions<JPEGState> {
        CodecFunctions(
            open: { file, options in
                let whole = JPEGState.skippingJunkBeforeStart(of: file)
                let markers = JPEGMarkers(reading: whole)
                let metadata = JPEGMetadata(reading: whole, markers: markers)
                let data = markers.withoutExtraneousBytes(in: whole)
                let header = try TurboJPEG.withDecompressor { decompressor in try decompressor.header(of: data) }
                var state = JPEGState(data: data, scanStart: markers.scanStart.map { data.count - (whole.count - $0) },
                                      colorspace: header.colorspace, orientation: metadata.orientation)
                if state.isCMYK, metadata.colorProfile?.colorSpace == "CMYK" { state.inkProfile = metadata.colorProfile }
                var opened = OpenedImage(width: header.width, height: header.height, frameCount: 1, state: state, colorProfile: metadata.colorProfile)
                opened.orientation = metadata.orientation
                opened.exif = metadata.exifRange.map { whole[whole.startIndex + $0.lowerBound..<whole.startIndex + $0.upperBound] }
                // Progressive files only: a baseline frame has a scan per component at most.
                if markers.isProgressive { opened.scanCount = markers.scanCount(in: whole, limit: options.maximumScanCount) }
                return opened
            },
            makeImage: { opened, _, options in
                let state = opened.state
                let bound = options.thumbnail?.longerSideCoveringEitherOrientation(width: opened.width, height: opened.height)
                let size = TurboJPEG.scaledSize(width: opened.width, height: opened.height, covering: bound)
                let image = try TurboJPEG.withDecompressor { decompressor in
                    try decompressor.decompress(state.data, width: size.width, height: size.height, colorspace: state.colorspace,
                                                scanStart: state.scanStart, fast: size.width < opened.width, inkProfile: state.inkProfile)
                }
                return image.applying(state.orientation)
            }
        )
    }
}

/// What the JPEG table's `open` hands to its `makeImage`: the encoded bytes,
/// the colour space from the frame header and the EXIF orientation.
///
/// Only `CodecFunctions.jpeg` makes one, so its `makeImage` always
/// receives a header its `open` has read.
public struct JPEGState: Sendable {
    /// The most junk skipped before the start-of-image marker.
    static let junkLimit = 1_024

    /// The encoded file, from its start-of-image marker, without the bytes
    /// libjpeg would discard before the first scan.
    let data: Data
    /// Where the first scan's marker is in ``data``; `nil` when the header
    /// could not be walked to it.
    let scanStart: Int?

    /// `file` from its first start-of-image marker (`FF D8 FF`) within
    /// ``junkLimit`` bytes; `file` itself when it starts with one or has none.
    static func skippingJunkBeforeStart(of file: Data) -> Data {
        let bytes = file.prefix(junkLimit + 3)
        guard bytes.count >= 3 else { return file }
        var index = bytes.startIndex
        if bytes[index] == 0xFF && bytes[index + 1] == 0xD8 { return file }
        while index + 2 < bytes.endIndex {
            if bytes[index] == 0xFF && bytes[index + 1] == 0xD8 && bytes[index + 2] == 0xFF { return Data(file[index...]) }
            index += 1
        }
        return file
    }
    /// The TurboJPEG colour space (`TJCS_…`) of the frame header.
    let colorspace: Int32
    /// Whether the frame holds inks (CMYK or YCCK).
    var isCMYK: Bool { Self.isCMYK(colorspace) }

    /// Whether a TurboJPEG colour space holds inks (CMYK or YCCK).
    static func isCMYK(_ colorspace: Int32) -> Bool {
        colorspace == Int32(TJCS_CMYK.rawValue) || colorspace == Int32(TJCS_YCCK.rawValue)
    }
    /// The file's CMYK profile, for a CMYK frame: its inks become sRGB through it.
    var inkProfile: ColorProfile?
    /// The EXIF orientation, ``ImageOrientation/up`` when there is none.
    let orientation: ImageOrientation
}

/// A TurboJPEG decompressor handle, destroyed when done.
struct TurboJPEG: ~Copyable {
    private let handle: tjhandle

    private init(_ handle: tjhandle) { self.handle = handle }

    /// Runs `body` with a fresh decompressor.
    static func withDecompressor<T>(_ body: (borrowing TurboJPEG) throws -> T) throws -> T {
        guard let handle = tjInitDecompress() else { throw CodecError.libjpegTurbo(.noHandle) }
        defer { tjDestroy(handle) }
        return try body(TurboJPEG(handle))
    }

    /// The size and colour space from the frame header; a warning (such as
    /// an unknown JFIF revision) is not a failure.
    func header(of data: Data) throws -> (width: Int, height: Int, colorspace: Int32) {
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        let status = data.withUnsafeBytes { raw in
            tjDecompressHeader3(handle, raw.bindMemory(to: UInt8.self).baseAddress, UInt(raw.count), &width, &height, &subsampling, &colorspace)
        }
        try check(status, allowWarning: true)
        guard width > 0, height > 0 else { throw CodecError.libjpegTurbo(.noFrameHeader) }
        return (Int(width), Int(height), colorspace)
    }

    /// Decodes at `width` x `height`, which must be a size the library can scale to.
    ///
    /// - Parameters:
    ///   - scanStart: Where the first scan's marker is, if known: when no
    ///     end-of-image marker follows it, data is missing.
    ///   - fast: Use the fast chroma upsampling, for a thumbnail that
    ///     is scaled down afterwards anyway.
    ///   - inkProfile: The CMYK profile a CMYK frame's inks become sRGB
    ///     through; without one (or when lcms2 cannot use it) they are
    ///     inverted naively.
    func decompress(_ data: Data, width: Int, height: Int, colorspace: Int32, scanStart: Int? = nil, fast: Bool = false,
                    inkProfile: ColorProfile? = nil) throws -> Image {
        let isGray = colorspace == Int32(TJCS_GRAY.rawValue)
        let isCMYK = JPEGState.isCMYK(colorspace)
        let pixelFormat: TJPF = isGray ? TJPF_GRAY : isCMYK ? TJPF_CMYK : TJPF_RGB
        let channels = isGray ? 1 : isCMYK ? 4 : 3
        let stride = width * channels
        var status: Int32 = 0
        let pixels = [UInt8](pixelCapacity: stride * height) { buffer, count in
            status = data.withUnsafeBytes { raw in
                tjDecompress2(
                    handle, raw.bindMemory(to: UInt8.self).baseAddress, UInt(raw.count),
                    buffer.baseAddress, Int32(width), Int32(stride), Int32(height), Int32(pixelFormat.rawValue), fast ? TJFLAG_FASTUPSAMPLE : 0
                )
            }
            // On failure the buffer may be partly written; it is discarded below.
            if status != 0 && tjGetErrorCode(handle) != Int32(TJERR_WARNING.rawValue) {
                buffer.initialize(repeating: 0)
            }
            count = stride * height
        }
        try check(status, allowWarning: true)
        var image: Image
        if isCMYK, let inkProfile, let rgb = try? LittleCMS.shared.rgb(fromInvertedCMYK: pixels, width: width, height: height, profile: inkProfile) {
            image = Image(width: width, height: height, pixelFormat: .rgb8, pixels: rgb)
            image.colorProfile = .sRGB
        } else if isCMYK {
            image = Image(width: width, height: height, pixelFormat: .rgb8, pixels: Self.rgb(fromInvertedCMYK: pixels))
        } else {
            image = Image(width: width, height: height, pixelFormat: isGray ? .gray8 : .rgb8, pixels: pixels)
        }
        // libjpeg's warnings for missing data: "Premature end of JPEG file"
        // and "Corrupt JPEG data: premature end of data segment". The handle
        // keeps only the first warning, so a file that ran out of data after
        // another warning (an unknown Adobe transform, junk between scans) is
        // told by the end-of-image marker it lacks.
        image.isPartial = status != 0 && (String(cString: tjGetErrorStr2(handle)).lowercased().contains("premature end")
                                          || !Self.hasEndMarker(data, after: scanStart ?? 2))
        return image
    }

    /// Whether an end-of-image marker (`FF D9`, which entropy-coded data
    /// cannot hold) follows `offset`; searched from the end, past any
    /// trailing bytes.
    static func hasEndMarker(_ data: Data, after offset: Int) -> Bool {
        data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var index = bytes.count - 2
            while index >= max(offset, 0) {
                if bytes[index] == 0xFF && bytes[index + 1] == 0xD9 { return true }
                index -= 1
            }
            return false
        }
    }

    /// Throws the handle's ``CodecError`` when `status` is a failure;
    /// warnings pass when allowed.
    private func check(_ status: Int32, allowWarning: Bool) throws {
        guard status != 0 else { return }
        if allowWarning && tjGetErrorCode(handle) == Int32(TJERR_WARNING.rawValue) { return }
        throw CodecError.libjpegTurbo(.call(handle))
    }

    /// The smallest size the library can scale to whose longer side is at
    /// least `target`; the full size without a target.
    static func scaledSize(width: Int, height: Int, covering target: Int?) -> (width: Int, height: Int) {
        guard let target, target > 0 else { return (width, height) }
        var count: Int32 = 0
        guard let factors = tjGetScalingFactors(&count) else { return (width, height) }
        var best = (width: width, height: height)
        for index in 0..<Int(count) {
            let factor = factors[index]
            guard factor.num <= factor.denom else { continue }   // never scale up
            let scaled = (
                width: (width * Int(factor.num) + Int(factor.denom) - 1) / Int(factor.denom),
                height: (height * Int(factor.num) + Int(factor.denom) - 1) / Int(factor.denom)
            )
            if max(scaled.width, scaled.height) >= target && scaled.width * scaled.height < best.width * best.height {
                best = scaled
            }
        }
        return best
    }

    /// Converts Adobe-style inverted CMYK to RGB.
    static func rgb(fromInvertedCMYK cmyk: [UInt8]) -> [UInt8] {
        let count = cmyk.count / 4
        return [UInt8](pixelCapacity: count * 3) { out, written in
            for index in 0..<count {
                let k = UInt32(cmyk[index * 4 + 3])
                for channel in 0..<3 {
                    out[index * 3 + channel] = UInt8((UInt32(cmyk[index * 4 + channel]) * k + 127) / 255)
                }
            }
            written = count * 3
        }
    }
}
