import Foundation
import ImagoServer

/// Presets that paths may name (`pr:thumb`), none of them `default`, so
/// that a path written from the parsed options parses back to the same
/// options without them. `loop` uses itself and `pair` uses `loop`.
let namedPresets: ImageServerPresets = {
    do {
        return try ImageServerPresets([
            "thumb": "rs:fill:200:200/q:70",
            "big": "w:1000/el:1",
            "sharp": "sh:1.5/f:webp",
            "loop": "pr:loop/bl:2",
            "pair": "pr:loop:thumb/g:sowe:3:4",
            "crop": "c:0.5:0.5:fp:0.25:0.75",
        ])
    } catch {
        fatalError("presets: \(error)")
    }
}()

/// The same with a `default` preset and only presets in paths: parsed for crashes only.
let onlyPresets: ImageServerPresets = {
    do {
        return try ImageServerPresets(["default": "q:50/el:1/pr:thumb", "thumb": "rs:fill:200:200", "webp": "f:webp"], onlyPresets: true)
    } catch {
        fatalError("presets: \(error)")
    }
}()

let signingKey = SigningKey(key: Array("fuzz-key".utf8), salt: Array("fuzz-salt".utf8))

func fuzzURL(_ text: String) {
    _ = try? ImageServerPath(parsing: text, presets: onlyPresets)
    _ = try? ImageServerPath(parsing: text)
    let parsed: ImageServerPath
    do {
        parsed = try ImageServerPath(parsing: text, presets: namedPresets)
    } catch {
        return
    }
    if !parsed.signedPart.hasPrefix("/") { violated("the signed part \(parsed.signedPart.prefix(80)) does not start with /") }
    for encoding in [ImageServerPath.SourceEncoding.plain, .base64] {
        for key in [nil, signingKey] {
            let written = parsed.path(signedWith: key, encoding: encoding)
            let again: ImageServerPath
            do {
                again = try ImageServerPath(parsing: written)
            } catch {
                violated("\(text.debugDescription) was written as \(written.debugDescription), which does not parse: \(error)")
                continue
            }
            let explained = again.options != parsed.options ? explainedDifference(parsed.options, again.options) : nil
            if again.options != parsed.options {
                violated("\(text.debugDescription) was written as \(written.debugDescription), which parses to other options:\n\(parsed.options)\n\(again.options)",
                         known: explained)
            }
            if again.source.absoluteString != parsed.source.absoluteString {
                violated("\(text.debugDescription) was written as \(written.debugDescription), which parses to the source \(again.source.absoluteString.debugDescription), not \(parsed.source.absoluteString.debugDescription)")
            }
            if again.isInfo != parsed.isInfo {
                violated("\(text.debugDescription) was written as \(written.debugDescription): isInfo \(parsed.isInfo) became \(again.isInfo)")
            }
            if let key {
                if !key.isValid(signature: again.signature, forPath: again.signedPart) {
                    violated("\(written.debugDescription): the writer's signature does not verify")
                }
            } else if again.signature != "insecure" {
                violated("\(written.debugDescription): unsigned path with signature \(again.signature)")
            }
            // The writer is a fixed point: what it wrote, parsed, is written the same.
            let rewritten = again.path(signedWith: key, encoding: encoding)
            if rewritten != written {
                // A consequence of a known difference in the options is that finding again.
                violated("\(text.debugDescription): written \(written.debugDescription), then \(rewritten.debugDescription)",
                         known: explained)
            }
        }
    }
}

/// The known finding that alone explains why `parsed` and `again` differ, or `nil`.
func explainedDifference(_ parsed: ProcessingOptions, _ again: ProcessingOptions) -> KnownFinding? {
    func withoutRawFormat(_ options: ProcessingOptions) -> ProcessingOptions {
        var options = options
        if options.isRaw { (options.format, options.requestsSVG) = (nil, false) }
        return options
    }
    func withoutTiledGravity(_ options: ProcessingOptions) -> ProcessingOptions {
        var options = options
        if options.watermark?.tiles == true { options.watermark?.gravity = .center }
        return options
    }
    if withoutRawFormat(parsed) == withoutRawFormat(again) { return .rawFormatLost }
    if withoutTiledGravity(parsed) == withoutTiledGravity(again) { return .tiledWatermarkGravity }
    // Both at once: reported as the first, which is also fatal under IMAGO_FUZZ_STRICT.
    if withoutTiledGravity(withoutRawFormat(parsed)) == withoutTiledGravity(withoutRawFormat(again)) { return .rawFormatLost }
    return nil
}
