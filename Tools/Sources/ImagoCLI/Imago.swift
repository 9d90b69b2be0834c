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

    /// Runs the command, mapping argument errors to exit status 2;
    /// `serve` also takes its flags from the environment (``ServeEnvironment``).
    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "serve" {
            arguments = ["serve"] + ServeEnvironment.arguments(Array(arguments.dropFirst()), environment: ProcessInfo.processInfo.environment).arguments
        }
        await CommandRunner.run(Self.self, arguments: arguments)
    }
}
