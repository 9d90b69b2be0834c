import Foundation
import Imago

extension CodecFunctions where State == BMPState {
    /// The production table for BMP: Imago's own reader (Debian has no
    /// maintained BMP library), every size checked against the data.
    ///
    /// `open` reads the 14-byte file header and the DIB header (see
    /// `DIBHeader`: core, info, V2 to V5 and OS/2 headers; 1, 2, 4 and 8
    /// bits with a palette, 16 and 32 with colour masks, 24; uncompressed,
    /// `BI_BITFIELDS`, `BI_ALPHABITFIELDS`, RLE8 and RLE4) and a V5
    /// header's embedded colour profile. No pixel buffer exists yet:
    /// ``CodecDecoder`` checks the size against
    /// ``ImageDecodingOptions/maximumPixelCount`` first. A bit depth other
    /// than those, JPEG or PNG compression and OS/2's Huffman and RLE24
    /// are refused, as imgproxy refuses them.
    ///
    /// `makeImage` checks that the data holds every row the header declares
    /// (for run-length data, that some data follows), then decodes to
    /// `.rgb8`, or `.rgba8` when some pixel is not
    /// opaque: alpha from a 32-bit pixel's fourth byte or an alpha mask
    /// (unless all of it is 0, as browsers read such files), and the
    /// pixels a run-length image skips are transparent. Bottom-up and
    /// top-down files come out top row first.
    ///
    /// Errors are ``CodecError`` values with `library == "imago-bmp"`.
    ///
    /// ```swift
    /// let decoder = CodecDecoder(format: .bmp, functions: .bmp)
    /// let image = try decoder.decode(data)
    /// ```
    public static var bmp: CodecFunctions<BMPState> {
        CodecFunctions(
            open: { data, _ in
                do {
                    let state = try BMPState(reading: data)
                    return OpenedImage(width: state.header.width, height: state.header.height, state: state,
                                       colorProfile: state.header.colorProfile)
                } catch let failure as BitmapFailure {
                    throw CodecError.bmp(failure)
                }
            },
            makeImage: { opened, _, _ in
                do {
                    return try opened.state.header.decodePixels(of: opened.state.data, at: opened.state.pixelOffset, isIconImage: false)
                } catch let failure as BitmapFailure {
                    throw CodecError.bmp(failure)
                }
            }
        )
    }
}

/// What the BMP table's `open` read: the file, its DIB header and where
/// its pixels start.
///
/// Only `CodecFunctions.bmp` makes one, so its `makeImage` always
/// receives a file its `open` has checked.
public struct BMPState: Sendable {
    /// The encoded file.
    let data: Data
    /// The DIB header.
    let header: DIBHeader
    /// Where the pixels start, from the start of the file.
    let pixelOffset: Int

    /// Reads the file header and the DIB header of `data`.
    ///
    /// - Throws: ``BitmapFailure``.
    init(reading data: Data) throws {
        let bytes = LittleEndianBytes(data)
        guard try bytes.uint16(at: 0, "the signature") == 0x4D42 else { throw BitmapFailure.invalid("no BM signature") }
        let offset = Int(try bytes.uint32(at: 10, "the file header"))
        header = try DIBHeader(reading: data, at: 14, paletteEnd: offset == 0 ? nil : offset)
        // An offset of 0 (which some writers leave) means right after the palette.
        pixelOffset = offset == 0 ? header.end : offset
        self.data = data
    }
}
