import ArgumentParser

extension Bench {
    /// `imago bench soak`: many requests through the pipeline to a fault-injecting server.
    struct Soak: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send many requests through the pipeline to a fault-injecting loopback server (not built yet)."
        )

        func run() async throws {
            throw ValidationError("imago bench soak is not built yet")
        }
    }
}
