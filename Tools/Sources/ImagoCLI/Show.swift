import ArgumentParser
import CommandLineSupport
import Foundation
import Imago
import ImagoCodecs
import SharedState
import TerminalRendering

/// `imago show SOURCE [--width COLUMNS]`: an image drawn in the terminal.
struct Show: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Draw an image in the terminal with 24-bit colour half blocks, aspect kept.",
        discussion: """
        With NO_COLOR set, the image is drawn in shades (░▒▓█) with no escape sequences. \
        On a terminal, an animation (GIF, WebP, APNG, JPEG XL, AVIF) plays in place at its frame durations, \
        as many times as the file says (forever for most), small enough to fit the window; Ctrl-C stops \
        it and gives the cursor back. Piped, only the first frame is drawn.
        """
    )

    @Argument(help: "An http(s) URL, a file URL or a path.")
    var source: String

    @Option(help: "Columns to use (default: the terminal's width).")
    var width: Int?

    func validate() throws {
        if let width, width < 1 { throw ValidationError("--width must be at least 1.") }
    }

    func run() async throws {
        var columns = width ?? HalfBlockRenderer.terminalColumns
        let image: Image
        do {
            let data = try await SourceLoader().bytes(of: SourceLoader.url(for: source))
            let info = try ImageDecoders.info(for: data)
            let plays = info.frameCount > 1 && Output.stdoutIsTerminal
            if plays {
                // Redrawing moves the cursor up over the frame: it must fit the window.
                columns = TerminalAnimation.columns(forWidth: info.width, height: info.height, columns: columns,
                                                    rows: max(HalfBlockRenderer.terminalRows - 1, 1))
            }
            // Decode no larger than needed: two pixel rows per character row.
            let options = ImageDecodingOptions(frameIndex: plays ? nil : 0, maximumPixelSize: max(columns, 1) * 2)
            image = try ImageDecoders.decoder(for: info.format).decode(data, options: options)
        } catch {
            Output.error("imago: \(source): \(Failure(error).message)")
            throw ExitCode(1)
        }
        guard image.isAnimated else {
            for line in HalfBlockRenderer.lines(for: image, columns: columns, colour: Output.colorEnabled) { Output.line(line) }
            return
        }
        try await play(image, columns: columns)
    }

    /// Plays the frames in place, `loopCount` times (forever for 0), with the
    /// cursor hidden; Ctrl-C (or SIGTERM) restores the terminal and exits 130.
    private func play(_ image: Image, columns: Int) async throws {
        let frames = image.frames.map { frame in
            let still = Image(width: image.width, height: image.height, pixelFormat: image.pixelFormat,
                              bytesPerRow: image.bytesPerRow, pixels: frame.pixels)
            return (lines: HalfBlockRenderer.lines(for: still, columns: columns, colour: Output.colorEnabled),
                    delay: TerminalAnimation.delay(of: frame))
        }
        // Whether the terminal was given back. A frame is written only under
        // this lock and while it is false, so nothing follows the restore.
        let restored = Locked(false)
        let interruptions = ([SIGINT, SIGTERM] as [Int32]).map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                restored.withLock { done in
                    if !done { Output.raw(TerminalAnimation.restoreTerminal) }
                    done = true
                }
                Foundation.exit(128 + number)
            }
            source.resume()
            return source
        }
        defer { interruptions.forEach { $0.cancel() } }
        Output.raw(TerminalAnimation.hideCursor)
        var previousLineCount = 0
        var loop = 0
        while image.loopCount == 0 || loop < image.loopCount {
            for frame in frames {
                let text = TerminalAnimation.text(for: frame.lines, previousLineCount: previousLineCount)
                guard restored.withLock({ done in
                    if !done { Output.raw(text) }
                    return !done
                }) else { await Self.waitForTheInterruptToEndTheProcess() }
                previousLineCount = frame.lines.count
                try await Task.sleep(for: frame.delay)
            }
            loop += 1
        }
        let wasInterrupted = restored.withLock { done in
            defer { done = true }
            if !done { Output.raw(TerminalAnimation.restoreTerminal) }
            return done
        }
        if wasInterrupted { await Self.waitForTheInterruptToEndTheProcess() }
    }

    /// Waits while a signal handler, which has given the terminal back, ends
    /// the process with its own status: returning would end it with 0 first.
    private static func waitForTheInterruptToEndTheProcess() async -> Never {
        while true { try? await Task.sleep(for: .seconds(60)) }
    }
}
