extension CodecDecoder {
    /// Checks an opened header against the limits in `options`: the one
    /// place a ``CodecDecoder`` (and so every production table) decides
    /// ``ImageDecodingError/Code/tooManyPixels``,
    /// ``ImageDecodingError/Code/tooManyFrames``, ``ImageDecodingError/Code/tooComplex`` and
    /// ``ImageDecodingError/Code/frameOutOfRange``. Runs before the image
    /// step, so no pixel buffer exists yet.
    func check(_ opened: OpenedImage<some Sendable>, options: ImageDecodingOptions) throws {
        try checkNotEmpty(opened)
        if opened.frameCount > options.maximumFrameCount {
            throw ImageDecodingError(
                .tooManyFrames, format: format,
                message: "\(opened.frameCount) frames exceed the limit of \(options.maximumFrameCount)"
            )
        }
        try checkStructure(opened, options: options)
        if let index = options.frameIndex, !(0..<opened.frameCount).contains(index) {
            throw ImageDecodingError(
                .frameOutOfRange, format: format,
                message: "frame \(index) was requested; the image has \(opened.frameCount)"
            )
        }
        // Frame k of an animation is composited from frames 0...k, so that is the work to bound.
        let frames = options.frameIndex.map { $0 + 1 } ?? opened.frameCount
        let (area, overflow1) = opened.width.multipliedReportingOverflow(by: opened.height)
        let (pixels, overflow2) = area.multipliedReportingOverflow(by: frames)
        if overflow1 || overflow2 || pixels > options.maximumPixelCount {
            throw ImageDecodingError(
                .tooManyPixels, format: format,
                message: "\(opened.width)x\(opened.height)\(frames > 1 ? " x \(frames) frames" : "") exceeds the limit of \(options.maximumPixelCount) pixels"
            )
        }
    }

    /// Rejects a file whose structure costs more to decode than its size
    /// says (more progressive scans or grid tiles than `options` allow) as
    /// ``ImageDecodingError/Code/tooComplex``: part of ``check(_:options:)``,
    /// and of ``info(for:options:)``, so a header read refuses what a decode would.
    func checkStructure(_ opened: OpenedImage<some Sendable>, options: ImageDecodingOptions) throws {
        if opened.scanCount > options.maximumScanCount {
            throw ImageDecodingError(
                .tooComplex, format: format,
                message: "\(opened.scanCount)\(opened.scanCount == options.maximumScanCount + 1 ? " or more" : "") scans exceed the limit of \(options.maximumScanCount)"
            )
        }
        try Self.checkTiles(opened.tileCount, options: options, format: format)
    }

    /// Rejects `tiles` over ``ImageDecodingOptions/maximumTileCount`` as
    /// ``ImageDecodingError/Code/tooComplex``: called by ``check(_:options:)``,
    /// and by a codec's `open` that must check before its library parses
    /// the file (libavif makes a decoder per tile while parsing).
    package static func checkTiles(_ tiles: Int, options: ImageDecodingOptions, format: ImageFormat?) throws {
        if tiles > options.maximumTileCount {
            throw ImageDecodingError(.tooComplex, format: format, message: "\(tiles) grid tiles exceed the limit of \(options.maximumTileCount)")
        }
    }

    /// Rejects a header that declares no pixels or no frames as
    /// ``ImageDecodingError/Code/couldNotOpen``.
    func checkNotEmpty(_ opened: OpenedImage<some Sendable>) throws {
        guard opened.width > 0, opened.height > 0, opened.frameCount > 0 else {
            throw ImageDecodingError(
                .couldNotOpen, format: format,
                message: "the header declares an empty image (\(opened.width)x\(opened.height), \(opened.frameCount) frames)"
            )
        }
    }
}
