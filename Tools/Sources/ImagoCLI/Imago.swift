import ArgumentParser
import CommandLineSupport
import Foundation

/// The `imago` command-line tool.
///
/// Exit status: 0 when every source succeeded, 1 when any failed, 2 for a
/// usage error.
@main
struct ImagoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "imago",
        abstract: "Fetch, inspect, convert and benchmark images with the Imago library.",
        version: ImagoVersion.current,
        subcommands: [Info.self, Fetch.self, Show.self, Albums.self, Bench.self, Serve.self]
    )

    /// Runs the command, mapping argument errors to exit status 2.
    static func main() async {
        await CommandRunner.run(Self.self)
    }
}
