import CHeif
import Foundation
import Imago

extension CodecFunctions where State == HEIFState {
    /// The production table for the HEIF container, over libheif: HEIC
    /// (HEVC, decoded by libde265). It reads AVIF too (AV1, through dav1d),
    /// but ``ImageDecoders`` decodes AVIF with libavif, twice as fast
    /// (`Benchmarks/raw/next_codecs.c`).
    ///
    /// `open` parses the container and reads the primary image's size (as
    /// displayed: after the `irot` rotation, `imir` mirror and `clap` crop
    /// the file declares), whether it has alpha, and its colour profile: an
    /// ICC profile (`prof`/`rICC`), or one made from an `nclx` box's
    /// primaries and transfer curve (BT.709 or unspecified primaries with
    /// the sRGB or BT.709 curve count as sRGB; PQ and HLG are kept as
    /// stored). No pixels are decoded, and libheif is told to refuse any
    /// side longer than ``ImageDecodingOptions/maximumPixelCount``.
    ///
    /// `makeImage` decodes the primary image to `.rgb8`, or `.rgba8` when it
    /// has alpha (not premultiplied); 10- and 12-bit images are reduced to
    /// 8 bits. The file's transformations are applied, so the image is
    /// upright; an EXIF orientation inside a HEIF file is ignored, as the
    /// format requires. A file holds one image for Imago: the other
    /// top-level images of a collection are not decoded. With
    /// ``ImageDecodingOptions/thumbnail`` set, the smallest thumbnail item
    /// the file carries that covers the thumbnail's size (both sides, as
    /// displayed) is decoded instead of the primary image, as imgproxy's
    /// `enforce_thumbnail` does when the item is large enough: a phone
    /// photo's 320-pixel item for a 256-pixel thumbnail. Otherwise there is
    /// no scaled decoding: ``CodecDecoder`` resizes to the thumbnail afterwards.
    ///
    /// Errors are ``CodecError`` values with `library == "libheif"`.
    ///
    /// ```swift
    /// let decoder = CodecDecoder(format: .heic, functions: .heif)
    /// let image = try decoder.decode(data)
    /// ```
    public static var heif: CodecFunctions<HEIFState> {
        CodecFunctions(
            open: { data, options in
                // Before libheif parses: a grid's tiles are decoded one by one, each with its own state.
                let tiles = ISOBMFFGrid.tileCount(in: data)
                try CodecDecoder.checkTiles(tiles, options: options, format: .heic)
                let state = try HEIFState(reading: data, options: options)
                var opened = OpenedImage(width: state.width, height: state.height, state: state, colorProfile: state.colorProfile)
                opened.tileCount = tiles
                opened.exif = state.exif
                return opened
            },
            makeImage: { opened, _, options in
                try opened.state.decode(options: options)
            }
        )
    }
}

/// What the HEIF table's `open` learned about a file's primary image, kept
/// with the data for its `makeImage`.
///
/// Only `CodecFunctions.heif` makes one, so its `makeImage` always
/// receives a file its `open` has read.
public struct HEIFState: Sendable {
    /// The encoded file.
    let data: Data
    /// The displayed width (after the file's transformations).
    let width: Int
    /// The displayed height (after the file's transformations).
    let height: Int
    /// Whether the primary image has an alpha plane.
    let hasAlpha: Bool
    /// The ICC profile, or the one an `nclx` box describes; `nil` for sRGB.
    let colorProfile: ColorProfile?
    /// The primary image's `Exif` item, as a TIFF structure.
    let exif: Data?

    /// Parses the container of `data` and reads the primary image's header.
    init(reading data: Data, options: ImageDecodingOptions) throws {
        let header = try Self.withPrimaryImage(of: data, options: options) { handle in
            (width: Int(heif_image_handle_get_width(handle)), height: Int(heif_image_handle_get_height(handle)),
             hasAlpha: heif_image_handle_has_alpha_channel(handle) != 0, profile: try Self.colorProfile(of: handle),
             exif: Self.exif(of: handle))
        }
        self.data = data
        (width, height, hasAlpha, colorProfile, exif) = header
    }

    /// The first `Exif` metadata item of `handle`, after its 4-byte offset
    /// to the TIFF header; `nil` when there is none, it is malformed, or it
    /// is larger than ``Imago/ImageMetadata/maximumExifBytes``.
    static func exif(of handle: OpaquePointer) -> Data? {
        var id: heif_item_id = 0
        guard heif_image_handle_get_list_of_metadata_block_IDs(handle, "Exif", &id, 1) == 1 else { return nil }
        let size = heif_image_handle_get_metadata_size(handle, id)
        guard size > 4, size <= ImageMetadata.maximumExifBytes + 4 else { return nil }
        var bytes = [UInt8](repeating: 0, count: size)
        guard heif_image_handle_get_metadata(handle, id, &bytes).code == heif_error_Ok else { return nil }
        let offset = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
        guard offset < size - 4 else { return nil }
        return Data(bytes[(4 + offset)...])
    }

    /// Decodes the primary image (or a thumbnail item that covers
    /// `options.thumbnail`), upright, into a buffer of its own.
    func decode(options: ImageDecodingOptions) throws -> Image {
        let pixelFormat: PixelFormat = hasAlpha ? .rgba8 : .rgb8
        return try Self.withPrimaryImage(of: data, options: options) { primary in
            let item = Self.thumbnailItem(of: primary, for: options, width: width, height: height)
            defer { if let item { heif_image_handle_release(item) } }
            return try Self.decode(item ?? primary, pixelFormat: pixelFormat)
        }
    }

    /// Decodes the image of `handle`, upright, to `pixelFormat` (`.rgb8` or
    /// `.rgba8`) in a buffer of its own.
    static func decode(_ handle: OpaquePointer, pixelFormat: PixelFormat) throws -> Image {
        let width = Int(heif_image_handle_get_width(handle)), height = Int(heif_image_handle_get_height(handle))
        let decodingOptions = heif_decoding_options_alloc()
        defer { heif_decoding_options_free(decodingOptions) }
        decodingOptions?.pointee.convert_hdr_to_8bit = 1
        var decoded: OpaquePointer?
        try HEIFFailure.check(heif_decode_image(
            handle, &decoded, heif_colorspace_RGB, pixelFormat == .rgba8 ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB,
            decodingOptions
        ))
        defer { heif_image_release(decoded) }
        var stride: Int32 = 0
        guard let decoded, let plane = heif_image_get_plane_readonly(decoded, heif_channel_interleaved, &stride),
              Int(heif_image_get_width(decoded, heif_channel_interleaved)) == width,
              Int(heif_image_get_height(decoded, heif_channel_interleaved)) == height,
              heif_image_get_bits_per_pixel_range(decoded, heif_channel_interleaved) == 8,
              Int(stride) >= width * pixelFormat.bytesPerPixel else {
            throw CodecError.libheif(.unexpectedImage(width: width, height: height))
        }
        let bytesPerRow = width * pixelFormat.bytesPerPixel
        let pixels = [UInt8](unsafeUninitializedCapacity: bytesPerRow * height) { buffer, count in
            for row in 0..<height {
                memcpy(buffer.baseAddress! + row * bytesPerRow, plane + row * Int(stride), bytesPerRow)
            }
            count = bytesPerRow * height
        }
        return Image(width: width, height: height, pixelFormat: pixelFormat, bytesPerRow: bytesPerRow, pixels: pixels)
    }

    /// Runs `body` with the primary image's handle, from a context over
    /// `data` that lives only for the call (libheif reads the bytes in place).
    static func withPrimaryImage<Result>(
        of data: Data, options: ImageDecodingOptions, _ body: (OpaquePointer) throws -> Result
    ) throws -> Result {
        guard let context = heif_context_alloc() else { throw CodecError.libheif(.call(code: -1, subcode: 0, message: "out of memory")) }
        defer { heif_context_free(context) }
        // No side can be longer than the pixel limit; libheif refuses such a file while parsing.
        heif_context_set_maximum_image_size_limit(context, Int32(clamping: options.maximumPixelCount))
        // Decode grid tiles on the calling thread: callers decode images in parallel already.
        heif_context_set_max_decoding_threads(context, 0)
        return try data.withUnsafeBytes { raw in
            try HEIFFailure.check(heif_context_read_from_memory_without_copy(context, raw.baseAddress, raw.count, nil))
            var handle: OpaquePointer?
            try HEIFFailure.check(heif_context_get_primary_image_handle(context, &handle))
            guard let handle else { throw CodecError.libheif(.noPrimaryImage) }
            defer { heif_image_handle_release(handle) }
            return try body(handle)
        }
    }

    /// The primary image's colour profile: the ICC bytes, or a profile
    /// made from the `nclx` box; `nil` when it is sRGB or says nothing.
    private static func colorProfile(of handle: OpaquePointer) throws -> ColorProfile? {
        switch heif_image_handle_get_color_profile_type(handle) {
        case heif_color_profile_type_prof, heif_color_profile_type_rICC:
            let size = heif_image_handle_get_raw_color_profile_size(handle)
            guard size > 0 else { return nil }
            var bytes = [UInt8](repeating: 0, count: size)
            try HEIFFailure.check(heif_image_handle_get_raw_color_profile(handle, &bytes))
            return ColorProfile(data: Data(bytes))
        case heif_color_profile_type_nclx:
            var nclx: UnsafeMutablePointer<heif_color_profile_nclx>?
            let status = heif_image_handle_get_nclx_color_profile(handle, &nclx)
            // libheif 1.15 allocates the profile even when it then reports
            // unknown primaries or curves: free it whatever the status.
            defer { if let nclx { heif_nclx_color_profile_free(nclx) } }
            guard status.code == heif_error_Ok, let nclx else { return nil }
            return colorProfile(nclx.pointee)
        default:
            return nil
        }
    }

    /// The profile an `nclx` box describes (see ``CICP``).
    static func colorProfile(_ nclx: heif_color_profile_nclx) -> ColorProfile? {
        CICP.profile(primaries: Int(nclx.color_primaries.rawValue), transfer: Int(nclx.transfer_characteristics.rawValue)) {
            Chromaticities(
                white: (Double(nclx.color_primary_white_x), Double(nclx.color_primary_white_y)),
                red: (Double(nclx.color_primary_red_x), Double(nclx.color_primary_red_y)),
                green: (Double(nclx.color_primary_green_x), Double(nclx.color_primary_green_y)),
                blue: (Double(nclx.color_primary_blue_x), Double(nclx.color_primary_blue_y))
            )
        }
    }
}
