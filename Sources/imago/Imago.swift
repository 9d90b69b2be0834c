import ArgumentParser

/// The `imago` command-line tool.
@main
struct ImagoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "imago",
        abstract: "Fetch, inspect and convert images with the Imago library.",
        subcommands: [Demo.self]
    )
}
