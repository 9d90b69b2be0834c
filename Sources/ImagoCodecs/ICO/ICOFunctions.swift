import Foundation
import Imago

extension CodecFunctions where State == ICOState {
    /// The production table for icons (ICO, and cursors, which share the
    /// layout): Imago's own reader of the directory, with the PNG table for
    /// PNG images and the BMP reader's `DIBHeader` for the others.
    ///
    /// `open` reads the directory and chooses its largest image (by the
    /// sizes the directory gives, then the bit depth, as imgproxy chooses),
    /// skipping entries whose bytes lie outside the data. A PNG image is
    /// opened by ``CodecFunctions/png`` (its own size, colour profile and
    /// orientation); a BMP image's header is read as a BMP's, its height
    /// counting the XOR and the AND masks.
    ///
    /// `makeImage` decodes the chosen image: a PNG (the first frame of an
    /// APNG) through the PNG table; a BMP image, its rows checked against
    /// the entry's bytes, to `.rgba8` (or `.rgb8` when every pixel is
    /// opaque), its alpha from its 32-bit pixels, or from its AND mask when
    /// they have none. Run-length BMP images are refused.
    ///
    /// Errors are ``CodecError`` values: `library == "imago-ico"` for the
    /// directory and BMP images, libspng's for a PNG image.
    ///
    /// ```swift
    /// let decoder = CodecDecoder(format: .ico, functions: .ico)
    /// let image = try decoder.decode(data)
    /// ```
    public static var ico: CodecFunctions<ICOState> {
        CodecFunctions(
            open: { data, options in
                do {
                    let entry = try ICODirectory(reading: data).largest
                    let image = data.subdata(in: data.startIndex + entry.offset..<data.startIndex + entry.offset + entry.size)
                    if image.starts(with: PNGEncoder.signature) {
                        let png = try CodecFunctions<PNGState>.png.open(image, options)
                        var opened = OpenedImage(width: png.width, height: png.height, state: ICOState(image: .png(png)),
                                                 colorProfile: png.colorProfile)
                        opened.orientation = png.orientation
                        opened.exif = png.exif
                        return opened
                    }
                    let header = try DIBHeader(reading: image, at: 0, isIconImage: true)
                    return OpenedImage(width: header.width, height: header.height, state: ICOState(image: .bitmap(header, image)),
                                       colorProfile: header.colorProfile)
                } catch let failure as BitmapFailure {
                    throw CodecError.ico(failure)
                }
            },
            makeImage: { opened, _, options in
                switch opened.state.image {
                case .png(let png):
                    return try CodecFunctions<PNGState>.png.makeImage(png, png.frameCount > 1 ? 0 : nil, options)
                case .bitmap(let header, let data):
                    do {
                        return try header.decodePixels(of: data, at: header.end, isIconImage: true)
                    } catch let failure as BitmapFailure {
                        throw CodecError.ico(failure)
                    }
                }
            }
        )
    }
}

/// What the ICO table's `open` chose: the directory's largest image, opened.
///
/// Only `CodecFunctions.ico` makes one.
public struct ICOState: Sendable {
    /// One image of an icon, with what its reader needs.
    enum Entry: Sendable {
        /// A PNG image, opened by the PNG table.
        case png(OpenedImage<PNGState>)
        /// A BMP image: its header and the entry's bytes.
        case bitmap(DIBHeader, Data)
    }

    /// The chosen image.
    let image: Entry
}

/// The directory of an icon: `ICONDIR` and its `ICONDIRENTRY` records.
struct ICODirectory {
    /// One image the directory lists.
    struct Entry: Hashable {
        /// The width the directory gives (1 to 256).
        let width: Int
        /// The height the directory gives (1 to 256).
        let height: Int
        /// The bits per pixel the directory gives (often 0 for a PNG image).
        let bitCount: Int
        /// Where the image's bytes start, from the start of the file.
        let offset: Int
        /// How many bytes the image takes.
        let size: Int
    }

    /// The entries whose bytes lie within the data, in the directory's order.
    let entries: [Entry]

    /// The largest image: the greatest area, then the greatest bit depth,
    /// then the first listed.
    var largest: Entry {
        entries.max { ($0.width * $0.height, $0.bitCount) < ($1.width * $1.height, $1.bitCount) }!
    }

    /// Reads the directory of `data`: reserved 0, type 1 (icon) or 2
    /// (cursor), at least one entry.
    ///
    /// - Throws: ``BitmapFailure``: a header that is not an icon's, a
    ///   directory the data does not hold, or no entry within the data.
    init(reading data: Data) throws {
        let bytes = LittleEndianBytes(data)
        let reserved = try bytes.uint16(at: 0, "the icon header"), type = try bytes.uint16(at: 2, "the icon header")
        let count = Int(try bytes.uint16(at: 4, "the icon header"))
        guard reserved == 0, type == 1 || type == 2 else { throw BitmapFailure.invalid("not an icon header") }
        guard count > 0 else { throw BitmapFailure.invalid("an icon with no images") }
        guard data.count - 6 >= count * 16 else { throw BitmapFailure.truncated("the directory of \(count) images") }
        var entries: [Entry] = []
        for index in 0..<count {
            let at = 6 + index * 16
            let width = Int(try bytes.uint8(at: at)), height = Int(try bytes.uint8(at: at + 1))
            let offset = Int(try bytes.uint32(at: at + 12, "an entry")), size = Int(try bytes.uint32(at: at + 8, "an entry"))
            guard size > 0, offset < data.count, data.count - offset >= size else { continue }
            entries.append(Entry(width: width == 0 ? 256 : width, height: height == 0 ? 256 : height,
                                 bitCount: Int(try bytes.uint16(at: at + 6, "an entry")), offset: offset, size: size))
        }
        guard !entries.isEmpty else { throw BitmapFailure.truncated("any of the \(count) images the directory lists") }
        self.entries = entries
    }
}
