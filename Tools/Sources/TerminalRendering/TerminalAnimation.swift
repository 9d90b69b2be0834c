import Foundation
import Imago

/// What playing an animation in place on a terminal writes: the frames'
/// half-block lines, each frame after the first preceded by a move back
/// up over the previous one, with the cursor hidden while it plays.
public enum TerminalAnimation {
    /// Hides the cursor (DEC private mode 25).
    public static let hideCursor = "\u{1B}[?25l"
    /// Shows the cursor again, after resetting colours: what an interrupted
    /// animation must leave behind.
    public static let restoreTerminal = "\u{1B}[0m\u{1B}[?25h"

    /// The shortest delay between frames. Browsers slow frames of 0 or 10 ms
    /// down to 100 ms; shorter delays than 20 ms are slowed here too.
    public static let shortestDelay: Duration = .milliseconds(20)

    /// The text that draws one frame: its lines, after moving the cursor up
    /// over `previousLineCount` lines (the frame before) when there was one.
    public static func text(for lines: [String], previousLineCount: Int) -> String {
        let up = previousLineCount > 0 ? "\u{1B}[\(previousLineCount)A\r" : ""
        return up + lines.joined(separator: "\n") + "\n"
    }

    /// How long a frame stays: its duration, at least ``shortestDelay``;
    /// 100 ms for a frame without one, as browsers show such frames.
    public static func delay(of frame: ImageFrame) -> Duration {
        guard let duration = frame.duration, duration > 0 else { return .milliseconds(100) }
        return max(.milliseconds(Int64((duration * 1_000).rounded())), shortestDelay)
    }

    /// The widest drawing, in columns, that fits both `columns` and `rows`
    /// lines of text (two pixel rows per line) for an image of this size,
    /// so a redraw never scrolls the terminal.
    public static func columns(forWidth width: Int, height: Int, columns: Int, rows: Int) -> Int {
        let fitting = max(1, (rows * 2 * width) / max(height, 1))
        return max(1, min(columns, fitting))
    }
}
