import ArgumentParser

extension Bench {
    /// `imago bench cache`: a process that reads and writes a disk cache, for crash-safety tests.
    struct Cache: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Read and write a disk cache directory until stopped (not built yet)."
        )

        func run() async throws {
            throw ValidationError("imago bench cache is not built yet")
        }
    }
}
