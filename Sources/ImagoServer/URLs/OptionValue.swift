#if Server
import Foundation
import Imago
import ImagoSVG

/// How the values of imgproxy's processing options are read and written:
/// sides, booleans, gravities, colours, qualities. Every reader checks its
/// range and throws a 404-class ``ImageServerError`` (`bad_options`) that
/// names the value, cut to a few characters.
enum OptionValue {
    static func bad(_ message: String) -> ImageServerError {
        ImageServerError(.badOptions, message)
    }

    static var maximumOutputSide: Int { ImageServerPath.maximumOutputSide }
    static var maximumBlur: Double { ImageServerPath.maximumBlur }
    static var maximumWatermarkScale: Double { ImageServerPath.maximumWatermarkScale }

    /// Formats imgproxy names in `skip_processing` that Imago does not
    /// read (or, for SVG, sends as SVG anyway): accepted, so that imgproxy's
    /// paths parse, and never matched.
    static let unreadableSourceFormats: Set<String> = ["svg", "pdf", "mp4"]

    static func format(named name: Substring) throws(ImageServerError) -> ProcessingOptions.OutputFormat {
        guard let format = ProcessingOptions.OutputFormat(name: String(name)) else {
            throw bad("unknown output format \"\(name.prefix(20))\" (jpg, jpeg, png, webp, avif, gif, jxl, heic, tiff, bmp or ico)")
        }
        return format
    }

    /// Sets the output format `name` names: one of ``ProcessingOptions/OutputFormat``,
    /// or `svg` (``ProcessingOptions/requestsSVG``); each clears the other.
    static func setFormat(named name: Substring, in options: inout ProcessingOptions) throws(ImageServerError) {
        if name.lowercased() == "svg" {
            (options.format, options.requestsSVG) = (nil, true)
        } else {
            (options.format, options.requestsSVG) = (try format(named: name), false)
        }
    }

    // MARK: Writing

    /// `TYPE`, `TYPE:X:Y`, or `fp:X:Y`.
    static func gravityArguments(_ gravity: ProcessingOptions.Gravity, _ offset: ProcessingOptions.Offset) -> String {
        gravity != .focusPoint && offset == .zero ? gravity.shortName : "\(gravity.shortName):\(number(offset.x)):\(number(offset.y))"
    }

    /// A number as a path writes it: whole numbers without a fraction.
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    // MARK: Reading

    /// A gravity and its offsets: `TYPE[:X[:Y]]`, `sm` alone, `fp:X:Y`
    /// (0 to 1). Offsets left out or empty keep `current`.
    static func gravity(
        _ arguments: ArraySlice<Substring>, current: ProcessingOptions.Offset, allowsSmart: Bool
    ) throws(ImageServerError) -> (ProcessingOptions.Gravity, ProcessingOptions.Offset) {
        let types = allowsSmart ? "ce, no, so, ea, we, noea, nowe, soea, sowe, sm or fp" : "ce, no, so, ea, we, noea, nowe, soea, sowe or fp"
        guard let first = arguments.first, let gravity = ProcessingOptions.Gravity(shortName: String(first)),
              allowsSmart || gravity != .smart else {
            throw bad("unknown gravity \"\(arguments.first?.prefix(20) ?? "")\" (\(types))")
        }
        let values = Array(arguments.dropFirst())
        switch gravity {
        case .smart:
            guard values.isEmpty else { throw bad("gravity sm takes no offsets") }
            return (gravity, .zero)
        case .focusPoint:
            guard values.count == 2, let x = Double(values[0]), let y = Double(values[1]),
                  (0...1).contains(x), (0...1).contains(y) else {
                throw bad("gravity fp takes a point X:Y, each from 0 to 1")
            }
            return (gravity, ProcessingOptions.Offset(x: x, y: y))
        default:
            guard values.count <= 2 else { throw bad("gravity takes at most two offsets, X and Y") }
            var offset = current
            for (index, value) in values.enumerated() where !value.isEmpty {
                guard let number = Double(value), number.isFinite, abs(number) <= Double(maximumOutputSide) else {
                    throw bad("a gravity offset must be a number, not \"\(value.prefix(20))\"")
                }
                if index == 0 { offset.x = number } else { offset.y = number }
            }
            return (gravity, offset)
        }
    }

    /// `extend` and `extend_aspect_ratio`: `BOOL[:GRAVITY[:X[:Y]]]`.
    static func placement(
        _ arguments: [Substring], name: String, current: ProcessingOptions.Placement?
    ) throws(ImageServerError) -> ProcessingOptions.Placement? {
        let enabled = try arguments[0].isEmpty ? false : boolean(arguments[0], name)
        // The gravity is checked even when the extension is off.
        var placement = current ?? .center
        if arguments.count > 1 {
            (placement.gravity, placement.offset) = try gravity(arguments[1...], current: placement.offset, allowsSmart: false)
        }
        return enabled ? placement : nil
    }

    /// `R:G:B` (0 to 255 each), a hex colour (`RGB` or `RRGGBB`), or
    /// nothing, which takes the background away.
    static func background(_ arguments: [Substring]) throws(ImageServerError) -> ImageColor? {
        switch arguments.count {
        case 1 where arguments[0].isEmpty:
            return nil
        case 1:
            let hex = arguments[0]
            guard hex.count == 3 || hex.count == 6, hex.allSatisfy(\.isHexDigit), let value = UInt32(hex, radix: 16) else {
                throw bad("background must be a hex colour (RGB or RRGGBB) or R:G:B, not \"\(hex.prefix(20))\"")
            }
            if hex.count == 3 {
                return ImageColor(red: UInt8((value >> 8) & 0xF) * 17, green: UInt8((value >> 4) & 0xF) * 17, blue: UInt8(value & 0xF) * 17)
            }
            return ImageColor(red: UInt8(value >> 16), green: UInt8((value >> 8) & 0xFF), blue: UInt8(value & 0xFF))
        case 3:
            var channels: [UInt8] = []
            for text in arguments {
                guard text.allSatisfy({ $0.isASCII && $0.isNumber }), let channel = UInt8(text) else {
                    throw bad("background channels must be whole numbers from 0 to 255, not \"\(text.prefix(20))\"")
                }
                channels.append(channel)
            }
            return ImageColor(red: channels[0], green: channels[1], blue: channels[2])
        default:
            throw bad("background takes a hex colour or R:G:B, not \(arguments.count) arguments")
        }
    }

    /// A quality from 0 to 100; 0 (the server's default) is `nil`.
    static func quality(_ text: Substring) throws(ImageServerError) -> Int? {
        guard let quality = Int(text), (0...100).contains(quality) else {
            throw bad("quality must be a whole number from 0 to 100, not \"\(text.prefix(20))\"")
        }
        return quality == 0 ? nil : quality
    }

    /// A blur or sharpen sigma from 0 to ``maximumBlur``; 0 (none) is `nil`.
    static func sigma(_ text: Substring, _ name: String) throws(ImageServerError) -> Double? {
        guard let sigma = Double(text), sigma.isFinite, (0...maximumBlur).contains(sigma) else {
            throw bad("\(name) must be a number from 0 to \(Int(maximumBlur)), not \"\(text.prefix(20))\"")
        }
        return sigma == 0 ? nil : sigma
    }

    /// A number above zero (zoom, dpr).
    static func positive(_ text: Substring, _ name: String) throws(ImageServerError) -> Double {
        guard let value = Double(text), value.isFinite, value > 0, value <= Double(maximumOutputSide) else {
            throw bad("\(name) must be a number above 0, not \"\(text.prefix(20))\"")
        }
        return value
    }

    /// A crop side: pixels from 1 up, a fraction below 1, 0 for the whole side.
    static func cropSide(_ text: Substring, _ name: String) throws(ImageServerError) -> Double {
        guard let value = Double(text), value.isFinite, (0...Double(maximumOutputSide * 8)).contains(value) else {
            throw bad("crop \(name) must be a number from 0 up, not \"\(text.prefix(20))\"")
        }
        return value
    }

    static func resizingType(_ text: Substring) throws(ImageServerError) -> ProcessingOptions.ResizingType {
        guard let type = ProcessingOptions.ResizingType(rawValue: String(text)) else {
            throw bad("unknown resizing type \"\(text.prefix(20))\" (fit, fill, fill-down, force or auto)")
        }
        return type
    }

    static func side(_ text: Substring, _ name: String) throws(ImageServerError) -> Int {
        guard text.allSatisfy(\.isASCII), let value = Int(text), (0...maximumOutputSide).contains(value) else {
            throw bad("\(name) must be a whole number from 0 to \(maximumOutputSide), not \"\(text.prefix(20))\"")
        }
        return value
    }

    /// A resolution in megapixels (`12.5`), as pixels; 0 or more, as imgproxy's.
    static func megapixels(_ text: Substring, _ name: String) throws(ImageServerError) -> Int {
        guard let value = Double(text), value.isFinite, value >= 0, value < 1e9 else {
            throw bad("\(name) must be a number of megapixels, 0 or more, not \"\(text.prefix(20))\"")
        }
        return Int((value * 1_000_000).rounded(.down))
    }

    static func boolean(_ text: Substring, _ name: String) throws(ImageServerError) -> Bool {
        switch text {
        case "1", "t", "T", "true", "TRUE", "True": return true
        case "0", "f", "F", "false", "FALSE", "False": return false
        default: throw bad("\(name) must be 1, t, true, 0, f or false, not \"\(text.prefix(20))\"")
        }
    }
}
#endif
