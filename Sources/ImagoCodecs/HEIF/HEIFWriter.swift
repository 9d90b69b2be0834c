import CHeif
import Foundation
import Imago

/// The half the AVIF and HEIC encoders share: an ``Image`` handed to one
/// of libheif's encoders and the file libheif writes.
///
/// The first frame is converted to RGB, or RGBA when it has an alpha
/// channel that is not fully opaque (gray is expanded); its
/// ``Image/colorProfile`` is embedded (a `colr` box of type `prof`);
/// `exif` (a TIFF structure) becomes the file's `Exif` item.
enum HEIFWriter {
    /// Encodes the first frame of `image` with libheif's encoder for
    /// `compression`, which `configure` sets up. With `storesRGBAsIs`, the
    /// RGB planes are coded as they are (the identity matrix, as GBR), so
    /// a lossless encoder keeps every pixel.
    ///
    /// - Throws: ``CodecError`` (libheif's).
    static func encode(_ image: Image, compression: heif_compression_format, exif: Data?, storesRGBAsIs: Bool,
                       configure: (OpaquePointer?) throws -> Void) throws -> Data {
        let first = image.firstFrame
        let hasAlpha = image.pixelFormat.hasAlpha && !first.isOpaque
        let rgb = first.converted(to: hasAlpha ? .rgba8 : .rgb8)
        guard let width = Int32(exactly: rgb.width), let height = Int32(exactly: rgb.height),
              let context = heif_context_alloc() else {
            throw CodecError.libheif(.call(code: -1, subcode: 0, message: "the image is too large or memory ran out"))
        }
        defer { heif_context_free(context) }

        var encoder: OpaquePointer?
        try HEIFFailure.check(heif_context_get_encoder_for_format(context, compression, &encoder))
        defer { heif_encoder_release(encoder) }
        try configure(encoder)

        var heifImage: OpaquePointer?
        try HEIFFailure.check(heif_image_create(width, height, heif_colorspace_RGB,
                                                hasAlpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, &heifImage))
        defer { heif_image_release(heifImage) }
        try HEIFFailure.check(heif_image_add_plane(heifImage, heif_channel_interleaved, width, height, 8))
        var stride: Int32 = 0
        guard let plane = heif_image_get_plane(heifImage, heif_channel_interleaved, &stride) else {
            throw CodecError.libheif(.call(code: -1, subcode: 0, message: "no plane to write"))
        }
        let rowBytes = rgb.width * rgb.pixelFormat.bytesPerPixel
        rgb.pixels.withUnsafeBytes { pixels in
            for row in 0..<rgb.height {
                memcpy(plane + row * Int(stride), pixels.baseAddress! + row * rgb.bytesPerRow, rowBytes)
            }
        }
        if let profile = image.colorProfile {
            try profile.data.withUnsafeBytes { bytes in
                try HEIFFailure.check(heif_image_set_raw_color_profile(heifImage, "prof", bytes.baseAddress, bytes.count))
            }
        }
        // Lossless needs the identity matrix (the RGB planes stored as they
        // are, as GBR): a round trip through YCbCr would change pixels by 1.
        let options = heif_encoding_options_alloc()
        defer { heif_encoding_options_free(options) }
        let nclx = heif_nclx_color_profile_alloc()
        defer { heif_nclx_color_profile_free(nclx) }
        if storesRGBAsIs, let options, let nclx {
            nclx.pointee.color_primaries = heif_color_primaries_ITU_R_BT_709_5
            nclx.pointee.transfer_characteristics = heif_transfer_characteristic_IEC_61966_2_1
            nclx.pointee.matrix_coefficients = heif_matrix_coefficients_RGB_GBR
            nclx.pointee.full_range_flag = 1
            options.pointee.output_nclx_profile = nclx
            try HEIFFailure.check(heif_image_set_nclx_color_profile(heifImage, nclx))
        }
        var handle: OpaquePointer?
        try HEIFFailure.check(heif_context_encode_image(context, heifImage, encoder, options, &handle))
        defer { heif_image_handle_release(handle) }
        if let exif, !exif.isEmpty {
            try exif.withUnsafeBytes { bytes in
                try HEIFFailure.check(heif_context_add_exif_metadata(context, handle, bytes.baseAddress, Int32(bytes.count)))
            }
        }
        return try write(context)
    }

    /// The file libheif writes for `context`.
    private static func write(_ context: OpaquePointer) throws -> Data {
        final class Sink { var data = Data() }
        let sink = Sink()
        var writer = heif_writer(writer_api_version: 1) { _, bytes, count, userData in
            let sink = Unmanaged<Sink>.fromOpaque(userData!).takeUnretainedValue()
            if let bytes { sink.data.append(bytes.assumingMemoryBound(to: UInt8.self), count: count) }
            return heif_error(code: heif_error_Ok, subcode: heif_suberror_Unspecified, message: nil)
        }
        try withExtendedLifetime(sink) {
            try HEIFFailure.check(heif_context_write(context, &writer, Unmanaged.passUnretained(sink).toOpaque()))
        }
        guard !sink.data.isEmpty else { throw CodecError.libheif(.encodingFailed) }
        return sink.data
    }
}
