import ArgumentParser
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
        subcommands: [Info.self, Fetch.self, Show.self, Albums.self, Bench.self]
    )

    /// Runs the command, mapping argument errors to exit status 2.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            if code == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(2)
            }
            exit(withError: error)
        }
    }
}
