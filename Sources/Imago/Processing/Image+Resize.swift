/// How an image is fitted to a target box by ``Image/resized(toFit:height:mode:allowsUpscaling:)``.
public enum ResizeMode: String, Sendable, Hashable, CaseIterable {
    /// Scale so the whole image fits inside the box; aspect ratio kept.
    case fit
    /// Scale so the image covers the box; aspect ratio kept, one side may overflow.
    case fill
    /// Cover the box, then cut the overflow evenly from both sides: exactly the box.
    case crop
}

extension Image {
    /// The image scaled to a box as `mode` says.
    ///
    /// - Parameters:
    ///   - width: The box width, at least 1.
    ///   - height: The box height, at least 1.
    ///   - allowsUpscaling: Whether a smaller image is enlarged; when `false`
    ///     (the default) it keeps its size, and ``ResizeMode/crop`` cuts only
    ///     what exceeds the box.
    public func resized(toFit width: Int, height: Int, mode: ResizeMode = .fit, allowsUpscaling: Bool = false) -> Image {
        precondition(width > 0 && height > 0, "the target box must not be empty")
        let scaleX = Double(width) / Double(self.width)
        let scaleY = Double(height) / Double(self.height)
        var scale = mode == .fit ? min(scaleX, scaleY) : max(scaleX, scaleY)
        if !allowsUpscaling { scale = min(scale, 1) }
        let scaledWidth = max(1, Int((Double(self.width) * scale).rounded()))
        let scaledHeight = max(1, Int((Double(self.height) * scale).rounded()))
        guard mode == .crop else { return resized(width: scaledWidth, height: scaledHeight) }
        // Crop in source coordinates first, so only the kept part is resampled.
        let keepWidth = min(self.width, max(1, Int((Double(min(width, scaledWidth)) / scale).rounded())))
        let keepHeight = min(self.height, max(1, Int((Double(min(height, scaledHeight)) / scale).rounded())))
        let cropped = cropped(x: (self.width - keepWidth) / 2, y: (self.height - keepHeight) / 2, width: keepWidth, height: keepHeight)
        return cropped.resized(width: min(width, scaledWidth), height: min(height, scaledHeight))
    }

    /// The image scaled so its longer side is at most `maximumPixelSize`;
    /// `self` when it is already that small.
    public func resized(maximumPixelSize: Int) -> Image {
        guard max(width, height) > maximumPixelSize else { return self }
        return resized(toFit: maximumPixelSize, height: maximumPixelSize, mode: .fit)
    }

    /// A rectangle of the image, clamped to its bounds.
    ///
    /// - Precondition: the rectangle overlaps the image.
    public func cropped(x: Int, y: Int, width: Int, height: Int) -> Image {
        let left = max(0, x), top = max(0, y)
        let right = min(self.width, x + width), bottom = min(self.height, y + height)
        precondition(right > left && bottom > top, "the crop rectangle lies outside the image")
        if left == 0 && top == 0 && right == self.width && bottom == self.height { return self }
        let bpp = pixelFormat.bytesPerPixel
        let rowBytes = (right - left) * bpp
        let frames = frames.map { frame in
            var pixels = [UInt8]()
            pixels.reserveCapacity(rowBytes * (bottom - top))
            for row in top..<bottom {
                let start = row * bytesPerRow + left * bpp
                pixels.append(contentsOf: frame.pixels[start..<start + rowBytes])
            }
            return ImageFrame(pixels: pixels, duration: frame.duration)
        }
        return derived(width: right - left, height: bottom - top, pixelFormat: pixelFormat, frames: frames)
    }

    /// The image resampled to exactly `width` x `height` with `filter`.
    ///
    /// With ``ResamplingFilter/area`` (the default), shrinking averages the
    /// covered area of every source pixel (a box filter with exact coverage
    /// weights) and enlarging interpolates linearly; ``ResamplingFilter/lanczos3``
    /// and ``ResamplingFilter/mitchell`` are sharper.
    /// Colours are weighted by alpha, so transparent pixels do not bleed.
    /// With `linearLight`, colours are averaged as light intensities
    /// (decoded from sRGB, encoded again after), as a camera would have
    /// seen the smaller picture: fine bright detail on dark keeps its
    /// brightness. Every frame is resampled.
    public func resized(width: Int, height: Int, filter: ResamplingFilter = .area, linearLight: Bool = false) -> Image {
        precondition(width > 0 && height > 0, "the target size must not be empty")
        if width == self.width && height == self.height { return self }
        let plan = ResamplingPlan(sourceWidth: self.width, sourceHeight: self.height, format: pixelFormat, width: width, height: height,
                                  filter: filter, linearLight: linearLight)
        let frames = frames.map { frame in
            ImageFrame(pixels: plan.resample(frame.pixels, bytesPerRow: bytesPerRow), duration: frame.duration)
        }
        return derived(width: width, height: height, pixelFormat: pixelFormat, frames: frames)
    }
}
