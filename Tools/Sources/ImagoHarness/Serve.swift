import ArgumentParser
import CommandLineSupport
import Foundation
import LoopbackServer

extension Harness {
    /// `imago-harness serve`: the benchmark's image server, for comparisons with other clients.
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Serve generated images on loopback and write their URLs to a file, until interrupted."
        )

        @Option(help: "How many image URLs to list.")
        var images: Int = 2_000

        @Option(help: ArgumentHelp("Write the URLs to FILE, one per line.", valueName: "FILE"))
        var list: String

        @Option(help: ArgumentHelp("Serve only JPEGs of this size, such as 4000x3000.", valueName: "WxH"))
        var photoSize: String?

        func run() async throws {
            let samples = try SampleImages.make(photoSize: SampleImages.size(photoSize))
            let server = try await LoopbackServer.start(handler: samples.handler)
            let text = samples.paths(count: images).map { server.url($0).absoluteString }.joined(separator: "\n") + "\n"
            try OutputFile.save(Data(text.utf8), to: SourceLoader.url(for: list))
            Output.error("serving \(images) images on \(server.baseURL.absoluteString); URLs in \(list)")
            while true { try await Task.sleep(for: .seconds(3_600)) }
        }
    }
}
