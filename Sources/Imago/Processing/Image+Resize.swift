extension Image {
    /// The image scaled to a box as `mode` says, with ``ResamplingFilter/area``:
    /// resampled once, then, for ``ResizeMode/crop`` and
    /// ``ResizeMode/cropToAspectRatio``, cut around the centre
    /// (``ResizeGeometry`` works out both). For another gravity, use
    /// ``resized(to:filter:linearLight:)``.
    ///
    /// - Parameters:
    ///   - width: The box width, at least 1.
    ///   - height: The box height, at least 1.
    ///   - allowsUpscaling: Whether a smaller image is enlarged; when `false`
    ///     (the default) no side grows, and ``ResizeMode/crop`` cuts only
    ///     what exceeds the box.
    public func resized(toFit width: Int, height: Int, mode: ResizeMode = .fit, allowsUpscaling: Bool = false) -> Image {
        precondition(width > 0 && height > 0, "the target box must not be empty")
        return resized(to: ResizeGeometry(sourceWidth: self.width, sourceHeight: self.height, boxWidth: width, boxHeight: height,
                                          mode: mode, allowsUpscaling: allowsUpscaling))
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
