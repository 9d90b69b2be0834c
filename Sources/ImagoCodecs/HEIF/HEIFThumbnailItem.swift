import CHeif
import Foundation
import Imago

extension HEIFState {
    /// The smallest thumbnail item of `primary` (an image referring to it
    /// with `thmb`) whose displayed size covers `size` in both directions,
    /// that has no more pixels than `primary` (whose size the decoder's
    /// limits have checked; a file could declare a huge "thumbnail"), and
    /// that has alpha when `primary` has (an item without would make a
    /// transparent image opaque); the caller releases it. `nil` when there
    /// is none.
    ///
    /// With `largest`, the largest such item instead of the smallest.
    static func thumbnailItem(of primary: OpaquePointer, covering size: (width: Int, height: Int), largest: Bool = false) -> OpaquePointer? {
        let needsAlpha = heif_image_handle_has_alpha_channel(primary) != 0
        let primaryPixels = Int(heif_image_handle_get_width(primary)) * Int(heif_image_handle_get_height(primary))
        let count = Int(heif_image_handle_get_number_of_thumbnails(primary))
        guard count > 0 else { return nil }
        var identifiers = [heif_item_id](repeating: 0, count: count)
        let listed = Int(heif_image_handle_get_list_of_thumbnail_IDs(primary, &identifiers, Int32(count)))
        var best: (handle: OpaquePointer, pixels: Int)?
        for identifier in identifiers.prefix(min(max(listed, 0), count)) {
            var thumbnail: OpaquePointer?
            guard heif_image_handle_get_thumbnail(primary, identifier, &thumbnail).code == heif_error_Ok, let thumbnail else { continue }
            let (width, height) = (Int(heif_image_handle_get_width(thumbnail)), Int(heif_image_handle_get_height(thumbnail)))
            let hasAlpha = heif_image_handle_has_alpha_channel(thumbnail) != 0
            if width >= size.width, height >= size.height, width * height <= primaryPixels, hasAlpha || !needsAlpha,
               largest ? width * height > best?.pixels ?? 0 : width * height < best?.pixels ?? .max {
                if let previous = best?.handle { heif_image_handle_release(previous) }
                best = (thumbnail, width * height)
            } else {
                heif_image_handle_release(thumbnail)
            }
        }
        return best?.handle
    }

    /// The thumbnail item `options` asks for, of a primary image of
    /// `width` x `height`: with ``ImageDecodingOptions/usesEmbeddedThumbnail``
    /// the largest there is, whatever its size; else, with a
    /// ``ImageDecodingOptions/thumbnail``, the smallest that covers it. The
    /// caller releases it; `nil` when there is none.
    static func thumbnailItem(of primary: OpaquePointer, for options: ImageDecodingOptions, width: Int, height: Int) -> OpaquePointer? {
        if options.usesEmbeddedThumbnail { return thumbnailItem(of: primary, covering: (1, 1), largest: true) }
        return options.thumbnail.flatMap { thumbnailItem(of: primary, covering: $0.scaledSize(width: width, height: height)) }
    }

    /// The thumbnail item of `data`'s primary image that `options` asks
    /// for (``thumbnailItem(of:for:width:height:)``), decoded upright to
    /// `pixelFormat`; `nil` when the file has no such item.
    ///
    /// For containers another library decodes (AVIF, through libavif, which
    /// does not expose thumbnail items): libheif parses the file (a few
    /// microseconds) and decodes the item with its AV1 decoder. Any libheif
    /// failure answers `nil`, so the caller decodes the primary image as
    /// it would have.
    static func thumbnailItemImage(of data: Data, width: Int, height: Int, pixelFormat: PixelFormat,
                                   options: ImageDecodingOptions) -> Image? {
        guard options.usesEmbeddedThumbnail || options.thumbnail != nil else { return nil }
        return try? withPrimaryImage(of: data, options: options) { primary -> Image? in
            guard let item = thumbnailItem(of: primary, for: options, width: width, height: height) else { return nil }
            defer { heif_image_handle_release(item) }
            return try decode(item, pixelFormat: pixelFormat)
        }
    }
}
