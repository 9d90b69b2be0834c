import ArgumentParser
import Foundation
import Imago
import ImagoServer

/// `imago serve`'s settings for what every image gets unless its path says
/// otherwise, the source limits that only animations and results need, and
/// the PNG and SVG parsers' limits: imgproxy's compression, formats and
/// security variables of the same names.
struct ServeImageDefaults: ParsableArguments {
    @Option(help: "Leave the source's metadata out of results unless a path says sm:0: true or false (IMGPROXY_STRIP_METADATA).")
    var stripMetadata: Switch = .on

    @Option(help: "When stripping metadata, keep the EXIF Artist and Copyright: true or false (IMGPROXY_KEEP_COPYRIGHT).")
    var keepCopyright: Switch = .on

    @Option(help: "Convert results to sRGB and drop the colour profile unless a path says scp:0: true or false (IMGPROXY_STRIP_COLOR_PROFILE).")
    var stripColorProfile: Switch = .on

    @Option(help: "Turn sources upright as their EXIF orientation says unless a path says ar:0: true or false (IMGPROXY_AUTO_ROTATE).")
    var autoRotate: Switch = .on

    @Flag(help: "Decode a HEIC or AVIF source's embedded thumbnail instead of its main image, when it has one (IMGPROXY_ENFORCE_THUMBNAIL).")
    var enforceThumbnail = false

    @Flag(help: "Accepted for imgproxy's IMGPROXY_PRESERVE_HDR; results are 8 bits per channel, so it changes nothing yet.")
    var preserveHdr = false

    @Option(help: "The formats a source decides among when no format is asked for or negotiated: its own when listed, else the first that keeps its alpha (and animation) (IMGPROXY_PREFERRED_FORMATS).")
    var preferredFormats = "jpeg,png,gif"

    @Option(help: "Sanitise SVG answered as SVG: true or false (false sends it as it came, still sandboxed) (IMGPROXY_SANITIZE_SVG).")
    var sanitizeSvg: Switch = .on

    @Option(help: "The largest width or height of a result, at most 8192; larger results are scaled down to fit; 0: 8192 (IMGPROXY_MAX_RESULT_DIMENSION).")
    var maxResultDimension = 0

    @Option(help: "When above 0, animations are checked frame by frame against this many megapixels instead of in total (IMGPROXY_MAX_ANIMATION_FRAME_RESOLUTION).")
    var maxAnimationFrameResolution = 0.0

    @Flag(help: "Read PNG sources whose text, EXIF or colour profile chunks are over libspng's limits (16 MiB inflated from one chunk, 64 MiB in all); the chunks still take at most 4 bytes per pixel of --max-src-resolution, and the source stays within --max-src-file-size (IMGPROXY_PNG_UNLIMITED).")
    var pngUnlimited = false

    @Flag(help: "Read SVG sources over libxml2's limits for huge documents (10 MB a document or attribute value, nesting deeper than 256; up to 2048), in the sanitiser and in the rasterizer; --svg-rasterizer-memory and --svg-rasterizer-timeout still hold (IMGPROXY_SVG_UNLIMITED).")
    var svgUnlimited = false

    /// ``preferredFormats`` read; `nil` when a name is not a format Imago writes.
    var preferred: [ImageFormat]? {
        let names = preferredFormats.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        let formats = names.compactMap { ProcessingOptions.OutputFormat(name: $0)?.imageFormat }
        return formats.count == names.count && !formats.isEmpty ? formats : nil
    }

    func validate() throws {
        guard preferred != nil else {
            throw ValidationError("--preferred-formats must name formats Imago writes (jpeg, png, gif, webp, avif, jxl, heic, tiff, bmp, ico), not \(preferredFormats).")
        }
        guard maxResultDimension >= 0 else { throw ValidationError("--max-result-dimension must be 0 or more.") }
        guard maxAnimationFrameResolution.isFinite, (0...10_000).contains(maxAnimationFrameResolution) else {
            throw ValidationError("--max-animation-frame-resolution must be from 0 to 10000 megapixels.")
        }
    }

    /// Sets these defaults and limits on `configuration`.
    func apply(to configuration: inout ImageServerConfiguration) {
        var options = ProcessingOptions()
        options.stripsMetadata = stripMetadata.isOn
        options.keepsCopyright = keepCopyright.isOn
        options.stripsColorProfile = stripColorProfile.isOn
        options.autoRotates = autoRotate.isOn
        options.enforcesThumbnail = enforceThumbnail
        options.preservesHDR = preserveHdr
        configuration.defaultOptions = options
        configuration.outputPolicy.preferredFormats = preferred
        configuration.sanitizesSVG = sanitizeSvg.isOn
        configuration.liftsPNGChunkLimits = pngUnlimited
        configuration.liftsSVGXMLLimits = svgUnlimited
        if maxResultDimension > 0 { configuration.maximumOutputSide = min(maxResultDimension, ImageServerPath.maximumOutputSide) }
        let framePixels = Int(maxAnimationFrameResolution * 1_000_000)
        configuration.maximumAnimationFramePixels = framePixels > 0 ? framePixels : nil
    }

    /// The settings, one `flag = value` line each, for `--print-config`.
    var configurationLines: [(String, String)] {
        [("strip-metadata", "\(stripMetadata.isOn)"), ("keep-copyright", "\(keepCopyright.isOn)"),
         ("strip-color-profile", "\(stripColorProfile.isOn)"), ("auto-rotate", "\(autoRotate.isOn)"),
         ("enforce-thumbnail", "\(enforceThumbnail)"), ("preferred-formats", preferredFormats), ("sanitize-svg", "\(sanitizeSvg.isOn)"), ("preserve-hdr", "\(preserveHdr)"),
         ("max-result-dimension", maxResultDimension > 0 ? "\(maxResultDimension)" : "(8192)"),
         ("max-animation-frame-resolution", maxAnimationFrameResolution > 0 ? "\(maxAnimationFrameResolution)" : "(off)"),
         ("png-unlimited", "\(pngUnlimited)"), ("svg-unlimited", "\(svgUnlimited)")]
    }
}
