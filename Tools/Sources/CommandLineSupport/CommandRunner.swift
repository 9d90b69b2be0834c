import ArgumentParser
import Foundation

/// Runs a root command with the exit statuses of the command-line contract
/// (README.md, "The command-line tool"): 0 when every source succeeded, 1
/// when any failed, 2 for a usage error.
public enum CommandRunner {
    /// Parses the arguments (the process's own by default), runs the command and exits.
    public static func run<Command: ParsableCommand>(_ root: Command.Type, arguments: [String]? = nil) async {
        do {
            var command = try root.parseAsRoot(arguments)
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            if root.exitCode(for: error) == .validationFailure {
                Output.error(root.fullMessage(for: error))
                Foundation.exit(2)
            }
            root.exit(withError: error)
        }
    }
}
