import Foundation
import Imago

extension DIBHeader {
    /// Decodes the pixels stored `offset` bytes into `data`, upright: RGB8,
    /// or RGBA8 when some pixel is not opaque.
    ///
    /// Alpha comes from a 32-bit pixel's fourth byte or an alpha mask,
    /// unless every pixel's is 0 (as browsers read BMPs whose writers left
    /// that byte empty); a run-length image's pixels that no run reaches
    /// are transparent, as browsers show them; an icon's image
    /// (`isIconImage`) without alpha of its own takes it from its AND
    /// mask, which follows its pixels (rows the data does not hold are
    /// opaque). Every read is checked against the data: rows that run past
    /// its end, and run-length data that stops before the last row, are
    /// ``BitmapFailure/truncated(_:)``.
    ///
    /// The caller has checked `width * height` against its pixel limit.
    func decodePixels(of data: Data, at offset: Int, isIconImage: Bool) throws -> Image {
        try checkPixels(in: data.count, at: offset)
        let (pixelCount, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixelCount <= Int.max / 4 else { throw BitmapFailure.invalid("a \(width)x\(height) image is too large") }
        let hasAlphaChannel = (masks?.alpha.bits ?? 0) > 0
        if compression != .none {
            guard !isIconImage else { throw BitmapFailure.unsupported("run-length encoding in an icon") }
            var rgba = [UInt8](repeating: 0, count: pixelCount * 4)
            try data.withUnsafeBytes { raw in
                try rgba.withUnsafeMutableBufferPointer { out in
                    try decodeRuns(raw.bindMemory(to: UInt8.self), from: offset, into: out.baseAddress!)
                }
            }
            return Self.image(width: width, height: height, rgba: rgba)
        }
        guard hasAlphaChannel || isIconImage else {
            let rgb = [UInt8](unsafeUninitializedCapacity: pixelCount * 3) { buffer, count in
                data.withUnsafeBytes { raw in decodeRows(raw.bindMemory(to: UInt8.self), from: offset, into: buffer.baseAddress!, channels: 3) }
                count = pixelCount * 3
            }
            return Image(width: width, height: height, pixelFormat: .rgb8, pixels: rgb)
        }
        var rgba = [UInt8](unsafeUninitializedCapacity: pixelCount * 4) { buffer, count in
            data.withUnsafeBytes { raw in decodeRows(raw.bindMemory(to: UInt8.self), from: offset, into: buffer.baseAddress!, channels: 4) }
            count = pixelCount * 4
        }
        let alphaIsEmpty = !hasAlphaChannel || rgba.withUnsafeBufferPointer { pixels in
            stride(from: 3, to: pixels.count, by: 4).allSatisfy { pixels[$0] == 0 }
        }
        if alphaIsEmpty {
            for index in stride(from: 3, to: rgba.count, by: 4) { rgba[index] = 255 }
            if isIconImage {
                data.withUnsafeBytes { raw in
                    rgba.withUnsafeMutableBufferPointer { applyANDMask(raw.bindMemory(to: UInt8.self), from: offset + rowStride * height, to: $0) }
                }
            }
        }
        return Self.image(width: width, height: height, rgba: rgba)
    }

    /// `rgba` as an image: RGBA8, or RGB8 when every pixel is opaque.
    static func image(width: Int, height: Int, rgba: [UInt8]) -> Image {
        let isOpaque = rgba.withUnsafeBufferPointer { pixels in
            stride(from: 3, to: pixels.count, by: 4).allSatisfy { pixels[$0] == 255 }
        }
        guard isOpaque else { return Image(width: width, height: height, pixelFormat: .rgba8, pixels: rgba) }
        let pixelCount = width * height
        let rgb = [UInt8](unsafeUninitializedCapacity: pixelCount * 3) { buffer, count in
            rgba.withUnsafeBufferPointer { source in
                for pixel in 0..<pixelCount {
                    buffer[3 * pixel] = source[4 * pixel]
                    buffer[3 * pixel + 1] = source[4 * pixel + 1]
                    buffer[3 * pixel + 2] = source[4 * pixel + 2]
                }
            }
            count = pixelCount * 3
        }
        return Image(width: width, height: height, pixelFormat: .rgb8, pixels: rgb)
    }

    /// Decodes the uncompressed rows at `offset` (checked by
    /// ``checkPixels(in:at:)``) into `out`, `channels` (3 or 4) bytes a
    /// pixel, top row first; the alpha of 4-channel pixels is the alpha
    /// mask's, or 255.
    private func decodeRows(_ source: UnsafeBufferPointer<UInt8>, from offset: Int, into out: UnsafeMutablePointer<UInt8>, channels: Int) {
        let masks = masks ?? Masks.none
        let scales = (masks.red.scale, masks.green.scale, masks.blue.scale, masks.alpha.scale)
        let hasAlpha = channels == 4 && masks.alpha.bits > 0
        let indexMask = (1 << bitCount) - 1
        let base = source.baseAddress! + offset
        for storedRow in 0..<height {
            let row = base + storedRow * rowStride
            var pixel = out + (isTopDown ? storedRow : height - 1 - storedRow) * width * channels
            for x in 0..<width {
                switch bitCount {
                case 24:
                    (pixel[0], pixel[1], pixel[2]) = (row[3 * x + 2], row[3 * x + 1], row[3 * x])
                    if channels == 4 { pixel[3] = 255 }
                case 16, 32:
                    let value = bitCount == 16
                        ? UInt32(row[2 * x]) | UInt32(row[2 * x + 1]) << 8
                        : UInt32(row[4 * x]) | UInt32(row[4 * x + 1]) << 8 | UInt32(row[4 * x + 2]) << 16 | UInt32(row[4 * x + 3]) << 24
                    pixel[0] = Self.sample(value, masks.red, scales.0)
                    pixel[1] = Self.sample(value, masks.green, scales.1)
                    pixel[2] = Self.sample(value, masks.blue, scales.2)
                    if channels == 4 { pixel[3] = hasAlpha ? Self.sample(value, masks.alpha, scales.3) : 255 }
                default:
                    let bit = x * bitCount
                    let index = Int(row[bit >> 3]) >> (8 - bitCount - (bit & 7)) & indexMask
                    (pixel[0], pixel[1], pixel[2]) = (palette[3 * index], palette[3 * index + 1], palette[3 * index + 2])
                    if channels == 4 { pixel[3] = 255 }
                }
                pixel += channels
            }
        }
    }

    /// One channel of a 16- or 32-bit pixel, scaled to 8 bits.
    @inline(__always)
    private static func sample(_ value: UInt32, _ channel: Channel, _ scale: [UInt8]) -> UInt8 {
        let raw = (value & channel.mask) >> UInt32(channel.shift)
        return scale[Int(channel.bits > 8 ? raw >> UInt32(channel.bits - 8) : raw)]
    }

    /// Sets the alpha of `rgba`'s pixels from the icon's AND mask at
    /// `offset`: a set bit is transparent. Rows past the data's end stay opaque.
    private func applyANDMask(_ source: UnsafeBufferPointer<UInt8>, from offset: Int, to rgba: UnsafeMutableBufferPointer<UInt8>) {
        let maskStride = (width + 31) / 32 * 4
        let rowBytes = (width + 7) / 8
        for storedRow in 0..<height {
            let start = offset + storedRow * maskStride
            guard start <= source.count - rowBytes else { return }
            let pixelRow = (isTopDown ? storedRow : height - 1 - storedRow) * width
            for x in 0..<width where (source[start + (x >> 3)] >> (7 - (x & 7))) & 1 == 1 {
                rgba[4 * (pixelRow + x) + 3] = 0
            }
        }
    }

    /// Decodes RLE8 or RLE4 data from `offset` into `out` (RGBA, zeroed:
    /// pixels no run reaches stay transparent). Runs past a row's end are
    /// cut; a delta or end of line past the last row ends the image, as
    /// does the end-of-bitmap code.
    ///
    /// - Throws: ``BitmapFailure/truncated(_:)`` when the data ends before
    ///   the last row, or inside an absolute run.
    private func decodeRuns(_ source: UnsafeBufferPointer<UInt8>, from offset: Int, into out: UnsafeMutablePointer<UInt8>) throws {
        let isRLE4 = compression == .rle4
        var (x, y, at) = (0, 0, offset)
        func put(_ index: Int) {
            guard x < width else { return }
            let pixel = out + 4 * ((isTopDown ? y : height - 1 - y) * width + x)
            (pixel[0], pixel[1], pixel[2], pixel[3]) = (palette[3 * index], palette[3 * index + 1], palette[3 * index + 2], 255)
        }
        while y < height {
            guard source.count - at >= 2 else { throw BitmapFailure.truncated("the end of the run-length data (row \(y) of \(height))") }
            let (count, value) = (Int(source[at]), Int(source[at + 1]))
            at += 2
            if count > 0 {
                for run in 0..<count where x < width {
                    put(isRLE4 ? (run & 1 == 0 ? value >> 4 : value & 0x0F) : value)
                    x += 1
                }
                continue
            }
            switch value {
            case 0:
                (x, y) = (0, y + 1)
            case 1:
                return
            case 2:
                guard source.count - at >= 2 else { throw BitmapFailure.truncated("a run-length delta") }
                x += Int(source[at])
                y += Int(source[at + 1])
                at += 2
            default:
                let bytes = isRLE4 ? (value + 1) / 2 : value
                guard source.count - at >= bytes else { throw BitmapFailure.truncated("an absolute run of \(value) pixels") }
                for run in 0..<value where x < width {
                    let byte = Int(source[at + (isRLE4 ? run / 2 : run)])
                    put(isRLE4 ? (run & 1 == 0 ? byte >> 4 : byte & 0x0F) : byte)
                    x += 1
                }
                at = min(source.count, at + ((bytes + 1) & ~1))   // runs are padded to 16 bits
            }
        }
    }
}

extension DIBHeader.Masks {
    /// No channels: the masks of a palette or 24-bit image, which has none.
    static let none = Self(red: .empty, green: .empty, blue: .empty, alpha: .empty)
}
