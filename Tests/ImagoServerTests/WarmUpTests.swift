#if Server && os(Linux)
import Foundation
import Hummingbird
import Imago
import ImagoCodecs
@testable import ImagoServer
import Testing

/// The render a server makes before its first request.
@Suite struct WarmUpTests {
    @Test func theWarmUpRendersAPhotoLikeJPEGAndPNGToThumbnailsOnEveryWorker() async throws {
        // The sources are a JPEG and a PNG of a photo's size.
        let sources = ImageServerEngine.warmUpSources
        #expect(try sources.map { try ImageDecoders.info(for: $0).format } == [ImageFormat.jpeg, .png])
        #expect(try sources.allSatisfy { let info = try ImageDecoders.info(for: $0); return (info.width, info.height) == (800, 600) })
        var configuration = ImageServerConfiguration(acceptsUnsignedPaths: true)
        configuration.workers = 3
        let server = ImageServer<BasicRequestContext>(configuration: configuration)
        let made = await server.warmUp()
        #expect(made.map(\.format) == [.jpeg, .jpeg])
        #expect(made.allSatisfy { ($0.width, $0.height) == (256, 192) })
        // It renders no request's image: nothing is decoded for one, nothing waits.
        #expect(server.decodeCount == 0 && server.jobsInProgress == 0)
    }
}
#endif
