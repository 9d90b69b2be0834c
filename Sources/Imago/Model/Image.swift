import Foundation

/// A decoded bitmap, independent of any platform's image type.
///
/// An `Image` holds one or more frames of the same size and pixel format.
/// A still image has one frame; an animation (GIF, animated WebP) has one
/// frame per step, each with its duration. Pixels are stored row by row,
/// top to bottom, with ``bytesPerRow`` bytes per row.
///
/// `Image` is a value type: copies share their pixel storage until one of
/// them is mutated.
///
/// ```swift
/// let image = try await client.image(from: url)
/// print(image.width, image.height, image.pixelFormat)
/// ```
public struct Image: Sendable, Hashable {
    /// The width in pixels.
    public let width: Int
    /// The height in pixels.
    public let height: Int
    /// How each pixel is laid out in memory.
    public let pixelFormat: PixelFormat
    /// The number of bytes from the start of one row to the start of the next.
    public let bytesPerRow: Int
    /// The frames, in display order; never empty.
    public let frames: [ImageFrame]
    /// The loop count the file declares, as ImageIO and Pillow report it:
    /// `0` means forever. `1` for a still image.
    public let loopCount: Int
    /// The colour space of the pixels when it is not sRGB: set by a decoder
    /// told to keep the file's profile
    /// (``ImageDecodingOptions/ColorManagement/keepOriginal``), kept by
    /// every transformation, and embedded by the encoders. `nil` means sRGB.
    public var colorProfile: ColorProfile?
    /// Whether the file ended early or lost data, and the image shows only
    /// what could be decoded, as browsers show such files: a truncated JPEG
    /// whose missing rows are gray. Set by a decoder, kept by every
    /// transformation; `false` for a whole image.
    public var isPartial = false
    /// What the file said beside the pixels (its EXIF and colour profile),
    /// as the decoder read it; `nil` when it said nothing or the image was
    /// not decoded from a file. Kept by every transformation, and written
    /// by an encoder only when asked (``MetadataPolicy``).
    public var metadata: ImageMetadata?

    /// Creates a still image from its pixels.
    ///
    /// - Parameters:
    ///   - width: The width in pixels, greater than zero.
    ///   - height: The height in pixels, greater than zero.
    ///   - pixelFormat: The layout of each pixel.
    ///   - bytesPerRow: The row stride; defaults to `width * pixelFormat.bytesPerPixel`.
    ///   - pixels: At least `bytesPerRow * height` bytes.
    /// - Precondition: the sizes are positive and `pixels` is large enough.
    public init(
        width: Int,
        height: Int,
        pixelFormat: PixelFormat = .rgba8,
        bytesPerRow: Int? = nil,
        pixels: [UInt8]
    ) {
        self.init(
            width: width,
            height: height,
            pixelFormat: pixelFormat,
            bytesPerRow: bytesPerRow,
            frames: [ImageFrame(pixels: pixels)],
            loopCount: 1
        )
    }

    /// Creates an image with one or more frames, such as an animation.
    ///
    /// - Parameters:
    ///   - frames: The frames in display order; at least one, each with
    ///     at least `bytesPerRow * height` bytes.
    ///   - loopCount: How many times the animation plays; `0` means forever.
    /// - Precondition: the sizes are positive, `frames` is not empty and
    ///   every frame is large enough.
    public init(
        width: Int,
        height: Int,
        pixelFormat: PixelFormat = .rgba8,
        bytesPerRow: Int? = nil,
        frames: [ImageFrame],
        loopCount: Int = 0
    ) {
        let stride = bytesPerRow ?? width * pixelFormat.bytesPerPixel
        precondition(width > 0 && height > 0, "an image needs a positive width and height")
        precondition(stride >= width * pixelFormat.bytesPerPixel, "bytesPerRow is smaller than one row of pixels")
        precondition(!frames.isEmpty, "an image needs at least one frame")
        precondition(
            frames.allSatisfy { $0.pixels.count >= stride * height },
            "a frame holds fewer bytes than bytesPerRow * height"
        )
        precondition(loopCount >= 0, "loopCount cannot be negative")
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.bytesPerRow = stride
        self.frames = frames
        self.loopCount = loopCount
    }

    /// The pixels of the first frame.
    public var pixels: [UInt8] { frames[0].pixels }

    /// An image made from this one: new size, format and frames, the same
    /// loop count and ``isPartial``, and the same colour profile unless the pixels changed
    /// between colour and gray (a profile describes one or the other).
    package func derived(width: Int, height: Int, pixelFormat: PixelFormat, frames: [ImageFrame]) -> Image {
        var image = Image(width: width, height: height, pixelFormat: pixelFormat, frames: frames, loopCount: loopCount)
        if pixelFormat.isGray == self.pixelFormat.isGray { image.colorProfile = colorProfile }
        image.isPartial = isPartial
        image.metadata = metadata
        return image
    }

    /// The first frame as a still image (`self` when the image is still),
    /// with the colour profile and ``isPartial`` kept.
    public var firstFrame: Image {
        guard isAnimated else { return self }
        var still = Image(width: width, height: height, pixelFormat: pixelFormat, bytesPerRow: bytesPerRow, pixels: pixels)
        still.colorProfile = colorProfile
        still.isPartial = isPartial
        still.metadata = metadata
        return still
    }

    /// Whether the image has more than one frame.
    public var isAnimated: Bool { frames.count > 1 }

    /// The memory the pixels occupy, in bytes, across all frames.
    ///
    /// Caches use this as the cost of keeping the image.
    public var cost: Int { frames.reduce(0) { $0 + $1.pixels.count } }

    /// The pixel at column `x`, row `y` of the first frame, as one byte per channel.
    ///
    /// For inspection and tests; it copies, so loops over many pixels should
    /// read ``pixels`` directly.
    ///
    /// - Precondition: `x` and `y` are inside the image.
    public func pixel(x: Int, y: Int) -> [UInt8] {
        precondition(x >= 0 && x < width && y >= 0 && y < height, "pixel (\(x), \(y)) is outside the image")
        let start = y * bytesPerRow + x * pixelFormat.bytesPerPixel
        return Array(frames[0].pixels[start..<start + pixelFormat.bytesPerPixel])
    }
}

extension Image: CustomStringConvertible {
    public var description: String {
        let animation = isAnimated ? ", \(frames.count) frames" : ""
        let profile = colorProfile.map { ", \($0)" } ?? ""
        return "Image(\(width)x\(height), \(pixelFormat)\(animation)\(profile))"
    }
}

/// One frame of an ``Image``.
public struct ImageFrame: Sendable, Hashable {
    /// The pixels, row by row, laid out as the image's ``Image/pixelFormat`` says.
    public let pixels: [UInt8]
    /// How long the frame is shown in an animation, in seconds; `nil` for a still image.
    public let duration: TimeInterval?

    /// Creates a frame.
    public init(pixels: [UInt8], duration: TimeInterval? = nil) {
        self.pixels = pixels
        self.duration = duration
    }
}
