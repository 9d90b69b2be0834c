#if Server
import Foundation
import Imago
import ImagoCodecs
import ImagoSVG

/// What identifies one rendered output: the source and the options, with
/// the negotiated format (`nil` when the output follows the source's
/// format, which is known only once the source is loaded).
struct RenderIdentity: Hashable, Sendable {
    let source: URL
    let options: ProcessingOptions
    /// The format the path itself names, when that matters beside the
    /// negotiated one (`skip_processing` skips only when the path names
    /// none or the source's); `nil` otherwise.
    var requestedFormat: ProcessingOptions.OutputFormat? = nil
    /// The format an animated source is written in, when the server keeps
    /// animations (negotiated without the formats that cannot animate);
    /// `nil` when the source decides, or when animations are not kept.
    var animatedFormat: ProcessingOptions.OutputFormat? = nil

    /// What the output cache counts for the key beside the output's bytes.
    var cost: Int { source.absoluteString.utf8.count + 64 }

    /// The version of ``storeKey``'s encoding. It changes whenever the same
    /// options would render something else (3: the encoding below replaced
    /// the path writer's text; 2 was an animation asked for as PNG becoming
    /// a still PNG).
    static let storeKeyVersion = 3

    /// The key of the result store (which names the object by its SHA-256):
    /// the version, the source, and every field of the options in a
    /// canonical encoding (``ProcessingOptions/canonicalFields``), so two
    /// renders share a stored object only when every field that shapes the
    /// output is equal.
    ///
    /// Encoder settings other than the defaults (`settings`) are part of it
    /// too, so a server whose compression settings changed does not answer
    /// with renders written the old way.
    func storeKey(settings: EncoderSettings = EncoderSettings()) -> String {
        var lines = ["imago-render v\(Self.storeKeyVersion)", "source=" + source.absoluteString,
                     "requestedFormat=" + (requestedFormat?.rawValue ?? "-"), "animatedFormat=" + (animatedFormat?.rawValue ?? "-")]
        lines += options.canonicalFields.map { "\($0.name)=\($0.value)" }
        if settings != EncoderSettings() { lines.append("encoder=\(settings)") }
        return lines.joined(separator: "\n")
    }
}

extension ProcessingOptions {
    /// Every stored property, by name, with its value written the same way
    /// in every process and on every replica (sets and dictionaries sorted,
    /// `-` for none): what the result store's key is made of, so that two
    /// renders share a stored object only when all their options are equal.
    /// (A test fails when a property is added without a line here.)
    public var canonicalFields: [(name: String, value: String)] {
        func text(_ value: Double?) -> String { value.map { $0.description } ?? "-" }
        func text(_ value: Int?) -> String { value.map(String.init) ?? "-" }
        func text(_ value: Bool) -> String { value ? "1" : "0" }
        func text(_ offset: Offset) -> String { "\(offset.x.description),\(offset.y.description)" }
        func text(_ placement: Placement?) -> String {
            placement.map { "\($0.gravity.shortName),\(text($0.offset))" } ?? "-"
        }
        func text(_ color: ImageColor?) -> String { color?.description ?? "-" }
        return [
            ("resizingType", resizingType.rawValue),
            ("width", String(width)),
            ("height", String(height)),
            ("enlarge", text(enlarge)),
            ("gravity", gravity.shortName),
            ("gravityOffset", text(gravityOffset)),
            ("minWidth", String(minWidth)),
            ("minHeight", String(minHeight)),
            ("zoomX", zoomX.description),
            ("zoomY", zoomY.description),
            ("dpr", dpr.description),
            ("extend", text(extend)),
            ("extendAspectRatio", text(extendAspectRatio)),
            ("trim", trim.map { "\($0.threshold.description),\(text($0.color)),\(text($0.equalHorizontal)),\(text($0.equalVertical))" } ?? "-"),
            ("crop", crop.map { "\($0.width.description),\($0.height.description),\($0.gravity?.shortName ?? "-"),\(text($0.offset))" } ?? "-"),
            ("padding", "\(padding.top),\(padding.right),\(padding.bottom),\(padding.left)"),
            ("rotation", String(rotation)),
            ("flipsHorizontally", text(flipsHorizontally)),
            ("flipsVertically", text(flipsVertically)),
            ("background", text(background)),
            ("maximumResultDimension", text(maximumResultDimension)),
            ("maximumSourcePixels", text(maximumSourcePixels)),
            ("maximumSourceBytes", text(maximumSourceBytes)),
            ("maximumAnimationFrames", text(maximumAnimationFrames)),
            ("maximumAnimationFramePixels", text(maximumAnimationFramePixels)),
            ("preservesHDR", text(preservesHDR)),
            ("enforcesThumbnail", text(enforcesThumbnail)),
            ("quality", text(quality)),
            ("format", format?.rawValue ?? "-"),
            ("requestsSVG", text(requestsSVG)),
            ("blur", text(blur)),
            ("sharpen", text(sharpen)),
            ("pixelate", text(pixelate)),
            ("formatQuality", formatQuality.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue):\($0.value)" }.joined(separator: ",")),
            ("maximumBytes", text(maximumBytes)),
            ("cacheBuster", cacheBuster ?? "-"),
            ("expires", text(expires)),
            ("filename", filename ?? "-"),
            ("returnsAttachment", text(returnsAttachment)),
            ("skipProcessingFormats", skipProcessingFormats.map(\.rawValue).sorted().joined(separator: ",")),
            ("autoRotates", text(autoRotates)),
            ("stripsMetadata", text(stripsMetadata)),
            ("keepsCopyright", text(keepsCopyright)),
            ("stripsColorProfile", text(stripsColorProfile)),
            ("watermark", watermark.map {
                "\($0.opacity.description),\($0.gravity.shortName),\(text($0.tiles)),\(text($0.offset)),\($0.scale.description)"
            } ?? "-"),
            ("isRaw", text(isRaw)),
        ]
    }
}
#endif
