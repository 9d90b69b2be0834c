import Foundation
import Imago

/// Draws an ``Image`` in a terminal with 24-bit colour: each character cell
/// is an upper half block (`▀`) whose foreground is the upper pixel and whose
/// background is the lower one, so a cell shows two square pixels.
///
/// ```swift
/// for line in HalfBlockRenderer.lines(for: image, columns: 40) { print(line) }
/// ```
public enum HalfBlockRenderer {
    /// An sRGB colour.
    public struct Color: Hashable, Sendable {
        public var red: UInt8, green: UInt8, blue: UInt8

        /// The brightness, 0...255 (Rec. 601 weights).
        var luma: Int { (299 * Int(red) + 587 * Int(green) + 114 * Int(blue)) / 1_000 }

        /// Creates a colour.
        public init(red: UInt8, green: UInt8, blue: UInt8) {
            self.red = red
            self.green = green
            self.blue = blue
        }
    }

    /// The text lines that draw `image` `columns` characters wide (or its own
    /// width, if narrower), aspect kept. Transparent pixels are blended over
    /// `background`. Each line ends by resetting the colours.
    ///
    /// With `colour` off (`NO_COLOR`), no escape sequence is written: each
    /// cell is a shade (` `, `░`, `▒`, `▓`, `█`) of the mean brightness of its
    /// two pixels.
    public static func lines(for image: Image, columns: Int, background: Color = Color(red: 0, green: 0, blue: 0), colour: Bool = true) -> [String] {
        precondition(columns > 0, "at least one column")
        let width = min(columns, image.width)
        let height = max(1, Int((Double(image.height) * Double(width) / Double(image.width)).rounded()))
        let scaled = image.resized(width: width, height: height).converted(to: .rgba8)
        let pixels = scaled.pixels
        func color(_ x: Int, _ y: Int) -> Color {
            guard y < height else { return background }
            let index = (y * width + x) * 4
            let alpha = UInt32(pixels[index + 3])
            func blend(_ value: UInt8, _ under: UInt8) -> UInt8 {
                UInt8((UInt32(value) * alpha + UInt32(under) * (255 - alpha) + 127) / 255)
            }
            return Color(red: blend(pixels[index], background.red),
                         green: blend(pixels[index + 1], background.green),
                         blue: blend(pixels[index + 2], background.blue))
        }
        if !colour {
            return stride(from: 0, to: height, by: 2).map { top in
                String((0..<width).map { x in shade((color(x, top).luma + color(x, top + 1).luma) / 2) })
            }
        }
        return stride(from: 0, to: height, by: 2).map { top in
            var line = ""
            var current: (Color, Color)?
            for x in 0..<width {
                let pair = (color(x, top), color(x, top + 1))
                if current.map({ $0.0 != pair.0 || $0.1 != pair.1 }) ?? true {
                    line += "\u{1B}[38;2;\(pair.0.red);\(pair.0.green);\(pair.0.blue)m"
                    line += "\u{1B}[48;2;\(pair.1.red);\(pair.1.green);\(pair.1.blue)m"
                    current = pair
                }
                line += "▀"
            }
            return line + "\u{1B}[0m"
        }
    }

    /// The shades of ``lines(for:columns:background:colour:)`` without colour, darkest first.
    static let shades: [Character] = [" ", "░", "▒", "▓", "█"]

    /// The shade for a brightness of 0...255.
    static func shade(_ luma: Int) -> Character {
        shades[min(shades.count - 1, luma * shades.count / 256)]
    }

    /// The terminal's width in columns: the window size of standard output,
    /// else `$COLUMNS`, else 80.
    public static var terminalColumns: Int {
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init) ?? 80
    }

    /// The terminal's height in rows: the window size of standard output,
    /// else `$LINES`, else 24.
    public static var terminalRows: Int {
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0 { return Int(size.ws_row) }
        return ProcessInfo.processInfo.environment["LINES"].flatMap(Int.init) ?? 24
    }
}
