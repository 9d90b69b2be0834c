/// A step that turns one image into another after decoding.
///
/// Two processors with the same ``identifier`` must produce the same
/// pixels: the identifier is part of the cache key and of the key that
/// merges identical work.
public protocol ImageProcessing: Sendable {
    /// What the processor does, with its parameters, such as `resize(256x256,fill)`.
    var identifier: String { get }
    /// Processes `image`; synchronous, may be slow, runs off the caller's thread.
    func process(_ image: Image) throws -> Image
}

/// Imago's processors.
public enum ImageProcessors {
    /// Scales to a box as ``ResizeMode`` says (the arithmetic is
    /// ``ResizeGeometry``'s, cuts are centred); never enlarges unless
    /// `allowsUpscaling`.
    public struct Resize: ImageProcessing, Hashable {
        /// The box width.
        public var width: Int
        /// The box height.
        public var height: Int
        /// How the image is fitted to the box.
        public var mode: ResizeMode
        /// Whether a side may become larger than the image's.
        public var allowsUpscaling: Bool

        /// Creates a resize to `width` x `height`.
        public init(width: Int, height: Int, mode: ResizeMode = .fit, allowsUpscaling: Bool = false) {
            precondition(width > 0 && height > 0, "the box must not be empty")
            self.width = width
            self.height = height
            self.mode = mode
            self.allowsUpscaling = allowsUpscaling
        }

        /// `resize(WxH,MODE)`, with `,up` when it may enlarge.
        public var identifier: String { "resize(\(width)x\(height),\(mode.rawValue)\(allowsUpscaling ? ",up" : ""))" }

        /// The image resized by ``Image/resized(toFit:height:mode:allowsUpscaling:)``.
        public func process(_ image: Image) throws -> Image {
            image.resized(toFit: width, height: height, mode: mode, allowsUpscaling: allowsUpscaling)
        }
    }

    /// Makes the corners transparent outside a quarter circle of `radius` pixels
    /// (anti-aliased); the result is ``PixelFormat/rgba8``.
    public struct RoundedCorners: ImageProcessing, Hashable {
        public var radius: Int

        /// Creates the processor.
        public init(radius: Int) {
            precondition(radius >= 0, "the radius cannot be negative")
            self.radius = radius
        }

        public var identifier: String { "roundedCorners(\(radius))" }

        public func process(_ image: Image) throws -> Image {
            image.roundingCorners(radius: radius)
        }
    }

    /// A box blur applied three times (close to a Gaussian of that radius).
    public struct Blur: ImageProcessing, Hashable {
        public var radius: Int

        /// Creates the processor.
        public init(radius: Int) {
            precondition(radius >= 0, "the radius cannot be negative")
            self.radius = radius
        }

        public var identifier: String { "blur(\(radius))" }

        public func process(_ image: Image) throws -> Image {
            image.blurred(radius: radius)
        }
    }
}

extension ImageProcessors.Blur {
    /// Creates the processor for a blur like a Gaussian of `sigma` pixels,
    /// as ``Image/blurred(sigma:)`` applies it.
    public init(sigma: Double) {
        precondition(sigma >= 0 && sigma.isFinite, "sigma must be a finite number, 0 or more")
        self.init(radius: sigma > 0 ? Image.boxRadius(sigma: sigma) : 0)
    }
}
