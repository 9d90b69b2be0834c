import CDeflate
import CSpng
import Foundation
import Imago

extension CodecFunctions where State == PNGState {
    /// The production table for PNG, over libspng.
    ///
    /// `open` reads the `IHDR` chunk and, of the chunks before the image data,
    /// the colour profile (`iCCP`; or `sRGB`, `gAMA` and `cHRM`) and the
    /// `eXIf` orientation. For an animated PNG (APNG), it walks the chunks
    /// to find the frames (see `APNG`); an APNG whose animation chunks
    /// break the specification is read as its still default image, as
    /// browsers show it.
    ///
    /// An APNG decodes to `.rgba8` canvases, each frame composited as its
    /// `fcTL` says (blend and dispose), with its duration and the file's
    /// loop count (`0` = forever); with a frame index, the frames before it
    /// are composited to produce it. Otherwise `makeImage` decodes to RGBA8 when
    /// the image has alpha or a `tRNS` chunk, otherwise to RGB8; 16-bit
    /// samples are reduced to 8 bits and palettes expanded; the image is
    /// turned upright as the `eXIf` orientation says. libspng's limits
    /// are set on every context: its chunk limits (16 MiB inflated from one
    /// chunk, 64 MiB of ancillary chunks kept; with
    /// ``ImageDecodingOptions/liftsPNGChunkLimits``, no limit per chunk and
    /// ``ImageDecodingOptions/maximumPixelCount`` x 4 bytes in all), a file
    /// over them being refused as ``ImageDecodingError/Code/tooComplex``
    /// (by `open` when the chunks come before the image data), and, for
    /// `makeImage`, width and height no larger
    /// than the header ``CodecDecoder`` approved (a defence in depth: the
    /// pixel limit itself is decided by ``CodecDecoder``). A CRC error in a
    /// critical chunk fails, including `IEND`; an ancillary chunk with a
    /// bad CRC, or with a length wrong for its type, is skipped, as browsers
    /// skip it (a damaged `iCCP` leaves the image untagged, a damaged `tRNS`
    /// opaque), and so is an ancillary chunk after the image data whose
    /// length runs past the end of the file. A length that breaks the chunk
    /// sequence anywhere else fails, as it does in browsers.
    ///
    /// With a ``ImageDecodingOptions/thumbnail`` smaller than the image, a
    /// non-interlaced PNG is decoded row by row and each row downscaled as it
    /// arrives, so the full-size bitmap never exists: the memory is the
    /// thumbnail plus a few rows. The result is the same, bit for bit, as a
    /// full decode followed by ``Image/resized(width:height:)``. Interlaced
    /// (Adam7) PNGs deliver rows out of order and are decoded in full.
    ///
    /// 8-bit RGB and RGBA images take a faster path (`PNGFastPath`):
    /// ISA-L's igzip inflates the image data straight from its chunks and
    /// Imago undoes the row filters itself. Whenever that path cannot decode a file exactly
    /// as libspng would, libspng decodes it. The 8-bit RGBA and RGB frames
    /// of an APNG take the same path (`APNGFastFrame`).
    public static var png: CodecFunctions<PNGState> { png(fastPath: true) }

    /// The PNG table, with or without ``PNGFastPath`` (tests compare the two).
    static func png(fastPath: Bool) -> CodecFunctions<PNGState> {
        CodecFunctions(
            open: { data, options in
                let (header, metadata, exif) = try SpngContext.withContext(data, chunkLimits: PNGChunkLimits(options)) { context in
                    let header = try context.header()
                    try context.readChunksBeforeImageData()
                    return (header, context.metadata(), context.exif())
                }
                let animation = APNG(reading: data)
                var opened = OpenedImage(width: Int(header.width), height: Int(header.height), frameCount: animation?.frames.count ?? 1,
                                         state: PNGState(data: data, orientation: metadata.orientation, animation: animation),
                                         colorProfile: metadata.colorProfile)
                opened.orientation = metadata.orientation
                opened.exif = exif
                return opened
            },
            makeImage: { opened, frameIndex, options in
                let orientation = opened.state.orientation
                if let animation = opened.state.animation {
                    return try animation.decode(opened.state.data, width: opened.width, height: opened.height,
                                                through: frameIndex ?? opened.frameCount - 1, keeping: frameIndex,
                                                fastPath: fastPath).applying(orientation)
                }
                let limits = (width: UInt32(clamping: opened.width), height: UInt32(clamping: opened.height))
                let image = try SpngContext.withContext(opened.state.data, imageLimits: limits, chunkLimits: PNGChunkLimits(options),
                                                        fastPath: fastPath) { context in
                    guard let thumbnail = options.thumbnail else { return try context.decode() }
                    return try context.decode(scaledTo: thumbnail.forStoredPixels(turnedBy: orientation))
                }
                return image.applying(orientation)
            },
            frames: { opened, last, _, body in
                let orientation = opened.state.orientation
                guard let animation = opened.state.animation else { return }
                try animation.forEachFrame(opened.state.data, width: opened.width, height: opened.height, through: last, fastPath: fastPath) {
                    try body($0.applying(orientation))
                }
            }
        )
    }
}

/// What the PNG table's `open` hands to its `makeImage`: the encoded bytes,
/// the EXIF orientation, and an APNG's frames.
///
/// Only `CodecFunctions.png` makes one, so its `makeImage` always
/// receives data its `open` has read.
public struct PNGState: Sendable {
    /// The encoded file.
    let data: Data
    /// The orientation of the `eXIf` chunk; ``ImageOrientation/up`` without one.
    let orientation: ImageOrientation
    /// The animation of an APNG; `nil` for a still PNG.
    let animation: APNG?
}

/// libspng's limits on ancillary chunks for one decode: the standard ones,
/// or those ``ImageDecodingOptions/liftsPNGChunkLimits`` lifts them to.
struct PNGChunkLimits: Sendable, Equatable {
    /// The most bytes libspng may inflate from one compressed chunk
    /// (`zTXt`, `iTXt`, `iCCP`); also the longest chunk ``PNGFastPath`` reads.
    var chunkSize: Int
    /// The most bytes libspng may keep for ancillary chunks in all.
    var cache: Int
    /// Whether these are the lifted limits.
    var isLifted: Bool

    /// The standard limits: 16 MiB from one chunk, 64 MiB in all.
    static let standard = PNGChunkLimits(chunkSize: 16 << 20, cache: 64 << 20, isLifted: false)

    /// The limits `options` ask for: the standard ones, or, lifted, no
    /// limit per chunk (libspng's largest, 2^31 - 1 bytes, or the total
    /// when that is smaller) and `maximumPixelCount` x 4 bytes in all, at
    /// least the standard total.
    init(_ options: ImageDecodingOptions) {
        guard options.liftsPNGChunkLimits else {
            self = .standard
            return
        }
        let (pixelBytes, overflow) = max(0, options.maximumPixelCount).multipliedReportingOverflow(by: 4)
        let cache = max(Self.standard.cache, overflow ? Int.max : pixelBytes)
        self.init(chunkSize: min(cache, Int(Int32.max)), cache: cache, isLifted: true)
    }

    private init(chunkSize: Int, cache: Int, isLifted: Bool) {
        self.chunkSize = chunkSize
        self.cache = cache
        self.isLifted = isLifted
    }

    /// The error for a file over these limits.
    func refusal(_ status: Int32) -> ImageDecodingError {
        let limits = isLifted
            ? "the lifted limit of \(cache) bytes in all (4 bytes per pixel of the pixel limit)"
            : "the limits of \(chunkSize >> 20) MiB inflated from one chunk and \(cache >> 20) MiB in all; liftsPNGChunkLimits lifts them"
        return ImageDecodingError(.tooComplex, format: .png, message: "the PNG's ancillary chunks are over \(limits)",
                                  underlying: CodecError.libspng(status))
    }
}

/// One libspng decoding context over a buffer, freed when done.
struct SpngContext: ~Copyable {
    private let context: OpaquePointer
    /// The encoded file, for ``PNGFastPath``.
    private let data: Data
    /// Whether ``PNGFastPath`` may decode the file.
    private let fastPath: Bool
    /// The chunk limits set on the context.
    private let chunkLimits: PNGChunkLimits

    private init(_ context: OpaquePointer, data: Data, fastPath: Bool, chunkLimits: PNGChunkLimits) {
        self.context = context
        self.data = data
        self.fastPath = fastPath
        self.chunkLimits = chunkLimits
    }

    /// Runs `body` with a context reading `data`, with `chunkLimits` set
    /// and, when given, `imageLimits` as libspng's largest width and height
    /// (otherwise libspng's own maximum, 2^31 - 1).
    static func withContext<T>(
        _ data: Data,
        imageLimits: (width: UInt32, height: UInt32)? = nil,
        chunkLimits: PNGChunkLimits = .standard,
        fastPath: Bool = false,
        _ body: (borrowing SpngContext) throws -> T
    ) throws -> T {
        try data.withUnsafeBytes { buffer in
            guard let raw = spng_ctx_new(0) else {
                throw CodecError.libspng(Int32(SPNG_EMEM.rawValue), detail: "could not allocate a context")
            }
            defer { spng_ctx_free(raw) }
            let context = SpngContext(raw, data: data, fastPath: fastPath, chunkLimits: chunkLimits)
            if let imageLimits {
                try check(spng_set_image_limits(raw, imageLimits.width, imageLimits.height))
            }
            try check(spng_set_chunk_limits(raw, chunkLimits.chunkSize, chunkLimits.cache))
            // A critical chunk with a bad CRC fails; an ancillary one is skipped, as browsers skip it.
            try check(spng_set_crc_action(raw, Int32(SPNG_CRC_ERROR.rawValue), Int32(SPNG_CRC_DISCARD.rawValue)))
            try check(spng_set_png_buffer(raw, buffer.baseAddress, buffer.count))
            return try body(context)
        }
    }

    /// The `eXIf` chunk's bytes, when there is one before the image data.
    func exif() -> Data? {
        var exif = spng_exif()
        guard spng_get_exif(context, &exif) == 0, let bytes = exif.data, exif.length > 0 else { return nil }
        return Data(bytes: bytes, count: exif.length)
    }

    /// Reads the chunks before the image data, and throws the
    /// ``ImageDecodingError/Code/tooComplex`` of ``PNGChunkLimits`` when
    /// they are over the limits. Other failures are left for the decode,
    /// which reports them (the getters that read metadata treat a chunk
    /// they cannot read as absent).
    func readChunksBeforeImageData() throws {
        // Any getter but the header's reads every chunk up to the image data.
        var transparency = spng_trns()
        let status = spng_get_trns(context, &transparency)
        if status == Int32(SPNG_ECHUNK_LIMITS.rawValue) { throw readingError(status) }
    }

    /// Reads the `IHDR` chunk.
    func header() throws -> spng_ihdr {
        var header = spng_ihdr()
        try Self.check(spng_get_ihdr(context, &header))
        return header
    }

    /// The colour profile and EXIF orientation of the chunks before the
    /// image data. The profile is the `iCCP` chunk's; with none, none for an
    /// `sRGB` chunk, else the one `gAMA` and `cHRM` describe (PNG's order of
    /// precedence). A malformed chunk counts as absent, as browsers treat it.
    func metadata() -> (colorProfile: ColorProfile?, orientation: ImageOrientation) {
        let orientation = exif().map(ExifOrientation.orientation(inEXIF:)) ?? .up
        var iccp = spng_iccp()
        if spng_get_iccp(context, &iccp) == 0, let bytes = iccp.profile, iccp.profile_len > 0 {
            return (ColorProfile(data: Data(bytes: bytes, count: iccp.profile_len)), orientation)
        }
        var intent: UInt8 = 0
        if spng_get_srgb(context, &intent) == 0 { return (nil, orientation) }
        var gamma = 0.0
        let hasGamma = spng_get_gama(context, &gamma) == 0 && gamma > 0
        var chrm = spng_chrm()
        let chromaticities = spng_get_chrm(context, &chrm) == 0
            ? Chromaticities(white: (chrm.white_point_x, chrm.white_point_y), red: (chrm.red_x, chrm.red_y),
                                green: (chrm.green_x, chrm.green_y), blue: (chrm.blue_x, chrm.blue_y))
            : nil
        guard hasGamma || chromaticities != nil else { return (nil, orientation) }
        return (ColorProfile.synthesized(gamma: hasGamma ? gamma : nil, chromaticities: chromaticities), orientation)
    }

    /// Decodes the whole image to RGBA8 (an APNG frame, to composite).
    func decodeRGBA() throws -> [UInt8] {
        var size = 0
        let format = Int32(SPNG_FMT_RGBA8.rawValue)
        try Self.check(spng_decoded_image_size(context, format, &size))
        return try [UInt8](pixelCapacity: size) { buffer, count in
            try Self.check(spng_decode_image(context, buffer.baseAddress, size, format, Int32(SPNG_DECODE_TRNS.rawValue)))
            count = size
        }
    }

    /// Decodes the whole image.
    func decode() throws -> Image {
        let header = try header()
        let format = try outputFormat(of: header)
        if fastPath, let image = PNGFastPath.decode(data, header: header, format: format.pixelFormat, plan: nil,
                                                    maximumChunkLength: chunkLimits.chunkSize) { return image }
        var size = 0
        try checkReading(spng_decoded_image_size(context, format.spng, &size))
        let pixels = try [UInt8](pixelCapacity: size) { buffer, count in
            try checkReading(spng_decode_image(context, buffer.baseAddress, size, format.spng, Int32(SPNG_DECODE_TRNS.rawValue)))
            count = size
        }
        try checkTrailingChunks()
        return Image(width: Int(header.width), height: Int(header.height), pixelFormat: format.pixelFormat, pixels: pixels)
    }

    /// Decodes the image scaled to `thumbnail`'s
    /// ``Thumbnail/scaledSize(width:height:)``, row by row, each row
    /// downscaled as libspng produces it; interlaced images, whose rows come
    /// out of order, and images no larger than the thumbnail are decoded whole.
    func decode(scaledTo thumbnail: Thumbnail) throws -> Image {
        let header = try header()
        let width = Int(header.width), height = Int(header.height)
        let scaled = thumbnail.scaledSize(width: width, height: height)
        guard header.interlace_method == 0, scaled.width < width || scaled.height < height else { return try decode() }
        let format = try outputFormat(of: header)
        let plan = ResamplingPlan(sourceWidth: width, sourceHeight: height, format: format.pixelFormat, width: scaled.width, height: scaled.height,
                                  filter: thumbnail.filter, linearLight: thumbnail.linearLight)
        if fastPath, let image = PNGFastPath.decode(data, header: header, format: format.pixelFormat, plan: plan,
                                                    maximumChunkLength: chunkLimits.chunkSize) { return image }
        var size = 0
        try checkReading(spng_decoded_image_size(context, format.spng, &size))
        let rowBytes = size / height
        let progressive = Int32(SPNG_DECODE_TRNS.rawValue | SPNG_DECODE_PROGRESSIVE.rawValue)
        try checkReading(spng_decode_image(context, nil, 0, format.spng, progressive))
        let row = UnsafeMutablePointer<UInt8>.allocate(capacity: rowBytes)
        defer { row.deallocate() }
        let pixels = try plan.makePixels { resampler in
            // libspng returns SPNG_EOI with the last row written, 0 with the others.
            var status = Int32(SPNG_OK.rawValue)
            while status == Int32(SPNG_OK.rawValue) {
                status = spng_decode_row(context, row, rowBytes)
                guard status == Int32(SPNG_OK.rawValue) || status == Int32(SPNG_EOI.rawValue) else { throw readingError(status) }
                guard !resampler.isComplete else {
                    throw CodecError.libspng(Int32(SPNG_EINTERNAL.rawValue), detail: "more rows than the header's height")
                }
                resampler.append(row: row)
            }
            guard resampler.isComplete else {
                throw CodecError.libspng(Int32(SPNG_EINTERNAL.rawValue), detail: "fewer rows than the header's height")
            }
        }
        try checkTrailingChunks()
        return Image(width: scaled.width, height: scaled.height, pixelFormat: format.pixelFormat, pixels: pixels)
    }

    /// RGBA8 when the image has alpha or a `tRNS` chunk, otherwise RGB8.
    private func outputFormat(of header: spng_ihdr) throws -> (spng: Int32, pixelFormat: PixelFormat) {
        var transparency = spng_trns()
        let transparencyStatus = spng_get_trns(context, &transparency)
        if transparencyStatus != Int32(SPNG_ECHUNKAVAIL.rawValue) { try checkReading(transparencyStatus) }
        let colorType = Int(header.color_type)
        let hasAlpha = colorType == Int(SPNG_COLOR_TYPE_GRAYSCALE_ALPHA.rawValue)
            || colorType == Int(SPNG_COLOR_TYPE_TRUECOLOR_ALPHA.rawValue)
            || transparencyStatus == Int32(SPNG_OK.rawValue)
        return hasAlpha ? (Int32(SPNG_FMT_RGBA8.rawValue), .rgba8) : (Int32(SPNG_FMT_RGB8.rawValue), .rgb8)
    }

    /// Reads the chunks after the image data.
    ///
    /// libspng checks the CRC of the last IDAT chunk, and the chunks after
    /// it, only when they are read: reading one of them (tIME) makes a broken
    /// checksum of a critical chunk or a missing IEND an error instead of a
    /// silent success. An ancillary chunk there whose length runs past the
    /// end of the file is skipped, as browsers skip it: the image is whole.
    private func checkTrailingChunks() throws {
        var time = spng_time()
        let trailing = spng_get_time(context, &time)
        if trailing != 0 && trailing != Int32(SPNG_ECHUNKAVAIL.rawValue) && !data.withUnsafeBytes(Self.endsInOverlongAncillaryChunk) {
            try checkReading(trailing)
        }
    }

    /// Whether `bytes` ends in an ancillary chunk, after the image data,
    /// whose length runs past the end, with every chunk before it whole and
    /// every `IDAT` chunk's CRC right.
    private static func endsInOverlongAncillaryChunk(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 8
        var sawImageData = false
        while offset + 8 <= bytes.count {
            let length = Int(PNGFastPath.bigEndian32(bytes, at: offset))
            let type = PNGFastPath.bigEndian32(bytes, at: offset + 4)
            let isImageData = type == 0x4944_4154   // IDAT
            guard length <= bytes.count - offset - 12 else {
                // Bit 5 of the first letter: lower case for an ancillary chunk.
                return sawImageData && !isImageData && type & 0x2000_0000 != 0
            }
            if isImageData {
                let checked = UnsafeRawBufferPointer(rebasing: bytes[offset + 4..<offset + 8 + length])
                guard libdeflate_crc32(0, checked.baseAddress, checked.count) == PNGFastPath.bigEndian32(bytes, at: offset + 8 + length) else {
                    return false
                }
                sawImageData = true
            }
            offset += 12 + length
        }
        return false
    }

    /// Throws the ``CodecError`` for `status` unless it is `SPNG_OK`.
    static func check(_ status: Int32) throws {
        guard status != Int32(SPNG_OK.rawValue) else { return }
        throw CodecError.libspng(status)
    }

    /// Throws ``readingError(_:)`` unless `status` is `SPNG_OK`.
    private func checkReading(_ status: Int32) throws {
        guard status != Int32(SPNG_OK.rawValue) else { return }
        throw readingError(status)
    }

    /// The error for a failed `status` while reading the file: the
    /// ``CodecError``, except that chunks over the limits are
    /// ``PNGChunkLimits``' ``ImageDecodingError/Code/tooComplex``.
    private func readingError(_ status: Int32) -> any Error {
        status == Int32(SPNG_ECHUNK_LIMITS.rawValue) ? chunkLimits.refusal(status) : CodecError.libspng(status)
    }
}
