import ArgumentParser
import CommandLineSupport
import Foundation

/// `imago-harness`: the test and reliability harness. Not shipped: the tests
/// and `scripts/` run it; users run `imago`.
@main
struct Harness: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "imago-harness",
        abstract: "Imago's test harness: soak runs against a fault-injecting server, disk-cache crash workers, servers and micro-benchmarks for comparisons.",
        subcommands: [Soak.self, Cache.self, Serve.self, Client.self]
    )

    /// Runs the command, mapping argument errors to exit status 2.
    static func main() async {
        await CommandRunner.run(Self.self)
    }
}
