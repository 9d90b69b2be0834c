import ArgumentParser
import CommandLineSupport
import Foundation
import Imago
import ImagoCodecs
import TerminalRendering

/// `imago show SOURCE [--width COLUMNS]`: an image drawn in the terminal.
struct Show: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Draw an image in the terminal with 24-bit colour half blocks, aspect kept.",
        discussion: "With NO_COLOR set, the image is drawn in shades (░▒▓█) with no escape sequences."
    )

    @Argument(help: "An http(s) URL, a file URL or a path.")
    var source: String

    @Option(help: "Columns to use (default: the terminal's width).")
    var width: Int?

    func validate() throws {
        if let width, width < 1 { throw ValidationError("--width must be at least 1.") }
    }

    func run() async throws {
        let columns = width ?? HalfBlockRenderer.terminalColumns
        do {
            let data = try await SourceLoader().bytes(of: SourceLoader.url(for: source))
            let info = try ImageDecoders.info(for: data)
            // Decode no larger than needed: two pixel rows per character row.
            let image = try ImageDecoders.decoder(for: info.format).decode(data, options: ImageDecodingOptions(frameIndex: 0, maximumPixelSize: max(columns, 1) * 2))
            for line in HalfBlockRenderer.lines(for: image, columns: columns, colour: Output.colorEnabled) { Output.line(line) }
        } catch {
            Output.error("imago: \(source): \(Failure(error).message)")
            throw ExitCode(1)
        }
    }
}
