import Foundation

/// The one decision of what a processed image is written as: its format,
/// whether it stays animated, its quality and whether the answer depends
/// on the client's `Accept` header. The image server, `imago fetch` and
/// library users all ask it, so they agree.
///
/// ```swift
/// let policy = OutputPolicy(automatic: [.avif, .webp])
/// let decision = policy.decision(forSource: .gif, hasAlpha: true, isAnimated: true, accept: "image/webp,*/*")
/// // .webp, animated, Vary: Accept
/// let data = try ImageEncoders.encode(image, as: decision)
/// ```
///
/// The rules, in order:
/// 1. A format in ``enforced`` that the client accepts, even over a requested one.
/// 2. The requested format.
/// 3. A format in ``automatic`` that the client accepts.
///    (Among several, JPEG XL is preferred to AVIF and AVIF to WebP, as imgproxy
///    prefers them; for an animated source only ``animatedFormats`` are candidates.)
/// 4. The source decides, among ``preferredFormats`` when they are set
///    (``stillFormat(forSource:hasAlpha:)``); else a still image by
///    ``ImageFormat/defaultOutputFormat(forSource:hasAlpha:)``, and an animation
///    keeps its format when that is one of ``animatedFormats``, else becomes
///    the first of WebP and GIF among them.
///
/// An animated source stays animated only in ``animatedFormats`` (GIF and
/// WebP by default, as imgproxy writes them); in any other format, such as
/// PNG when asked for, it is written as its first frame.
public struct OutputPolicy: Sendable, Hashable {
    /// Formats used when nothing is requested and the client accepts them.
    public var automatic: Set<ImageFormat>
    /// Formats used whenever the client accepts them, over a requested one.
    public var enforced: Set<ImageFormat>
    /// The formats an animation is written in as an animation. Add
    /// ``ImageFormat/png`` for APNG.
    public var animatedFormats: Set<ImageFormat>
    /// The quality for each format when the request names none.
    public var qualities: [ImageFormat: Int]
    /// The quality for the other formats when the request names none; `nil`
    /// leaves it to the encoder's default (JPEG 85, WebP 80, AVIF 60).
    public var defaultQuality: Int?
    /// Which of the source's EXIF is written (JPEG, PNG, WebP and AVIF);
    /// by default none.
    public var metadata: MetadataPolicy
    /// The formats the source decides among (imgproxy's
    /// `IMGPROXY_PREFERRED_FORMATS`, `[.jpeg, .png, .gif]` there): the
    /// source's own when listed, else the first listed that keeps the
    /// image's alpha (and, for an animation, animates), else the first.
    /// `nil` (the default): ``ImageFormat/defaultOutputFormat(forSource:hasAlpha:)``,
    /// and an animation keeps its format or becomes WebP.
    public var preferredFormats: [ImageFormat]?

    /// The formats negotiation prefers, best first.
    static let preference: [ImageFormat] = [.jxl, .avif, .webp]

    /// Creates a policy; by default nothing is negotiated, animations stay
    /// animated in GIF and WebP, and the encoders' qualities apply.
    public init(automatic: Set<ImageFormat> = [], enforced: Set<ImageFormat> = [], animatedFormats: Set<ImageFormat> = [.gif, .webp],
                qualities: [ImageFormat: Int] = [:], defaultQuality: Int? = nil, metadata: MetadataPolicy = .strip) {
        self.automatic = automatic
        self.enforced = enforced
        self.animatedFormats = animatedFormats
        self.qualities = qualities
        self.defaultQuality = defaultQuality
        self.metadata = metadata
        self.preferredFormats = nil
    }

    /// The part of the decision known before the source: the format that
    /// rules 1 to 3 give (`nil` when the source decides), and whether it
    /// depended on `accept`.
    ///
    /// - Parameter animated: Whether the choice is for an animated source:
    ///   then only ``animatedFormats`` are negotiated.
    public func negotiated(requested: ImageFormat?, accept: String?, animated: Bool = false)
        -> (format: ImageFormat?, variesWithAccept: Bool) {
        var candidates = requested == nil ? automatic.union(enforced) : enforced
        if animated { candidates.formIntersection(animatedFormats) }
        guard !candidates.isEmpty else { return (requested, false) }
        let accepted = Self.preference.first { candidates.contains($0) && Self.accepts($0.mimeType, in: accept) }
            ?? candidates.sorted { $0.rawValue < $1.rawValue }.first { Self.accepts($0.mimeType, in: accept) }
        return (accepted ?? requested, true)
    }

    /// The whole decision for an image decoded from a `source` file.
    ///
    /// - Parameters:
    ///   - source: The source's format; `nil` when unknown.
    ///   - hasAlpha: Whether the image to write has alpha (usually
    ///     `image.pixelFormat.hasAlpha`).
    ///   - isAnimated: Whether the image to write has more than one frame.
    ///   - requested: The format asked for, if any.
    ///   - quality: The quality asked for, if any.
    ///   - accept: The client's `Accept` header, if any.
    public func decision(forSource source: ImageFormat?, hasAlpha: Bool, isAnimated: Bool = false, requested: ImageFormat? = nil,
                         quality: Int? = nil, accept: String? = nil) -> OutputDecision {
        let (negotiated, varies) = negotiated(requested: requested, accept: accept, animated: isAnimated)
        let format = negotiated ?? (isAnimated ? animatedFormat(forSource: source) : nil)
            ?? stillFormat(forSource: source, hasAlpha: hasAlpha)
        return OutputDecision(format: format, isAnimated: isAnimated && animatedFormats.contains(format),
                              quality: self.quality(for: format, requested: quality), variesWithAccept: varies, metadata: metadata)
    }

    /// The format an animation is written in when nothing is requested or
    /// negotiated: its own when it animates there, else WebP, else GIF;
    /// `nil` when no format animates.
    public func animatedFormat(forSource source: ImageFormat?) -> ImageFormat? {
        if let preferred = preferredFormats, !preferred.isEmpty {
            if let source, preferred.contains(source), animatedFormats.contains(source) { return source }
            return preferred.first { animatedFormats.contains($0) }
        }
        if let source, animatedFormats.contains(source) { return source }
        return [ImageFormat.webp, .gif].first { animatedFormats.contains($0) }
    }

    /// The format a still image is written in when nothing is requested or
    /// negotiated: by ``preferredFormats`` when set, else by the source
    /// (``ImageFormat/defaultOutputFormat(forSource:hasAlpha:)``).
    public func stillFormat(forSource source: ImageFormat?, hasAlpha: Bool) -> ImageFormat {
        guard let preferred = preferredFormats, let first = preferred.first else {
            return ImageFormat.defaultOutputFormat(forSource: source, hasAlpha: hasAlpha)
        }
        if let source, preferred.contains(source) { return source }
        return preferred.first { !hasAlpha || $0.storesAlpha } ?? first
    }

    /// The quality for `format`: `requested`, else the format's in
    /// ``qualities``, else ``defaultQuality``; `nil` for the encoder's default.
    public func quality(for format: ImageFormat, requested: Int? = nil) -> Int? {
        requested ?? qualities[format] ?? defaultQuality
    }

    /// Whether an `Accept` header lists `type` with a quality above zero.
    public static func accepts(_ type: String, in accept: String?) -> Bool {
        guard let accept else { return false }
        for item in accept.split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard parts.first == type else { continue }
            let quality = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return quality > 0
        }
        return false
    }
}

/// What ``OutputPolicy`` decided for one image.
public struct OutputDecision: Sendable, Hashable {
    /// The format to write.
    public var format: ImageFormat
    /// Whether every frame is written (an animation in a format that
    /// animates); otherwise only the first.
    public var isAnimated: Bool
    /// The quality to write at; `nil` for the encoder's default.
    public var quality: Int?
    /// Whether the format depended on the `Accept` header: an HTTP answer
    /// must then say `Vary: Accept`.
    public var variesWithAccept: Bool
    /// Which of the image's EXIF (``Image/metadata``) is written.
    public var metadata: MetadataPolicy

    /// Creates a decision.
    public init(format: ImageFormat, isAnimated: Bool = false, quality: Int? = nil, variesWithAccept: Bool = false,
                metadata: MetadataPolicy = .strip) {
        self.format = format
        self.isAnimated = isAnimated
        self.quality = quality
        self.variesWithAccept = variesWithAccept
        self.metadata = metadata
    }
}
