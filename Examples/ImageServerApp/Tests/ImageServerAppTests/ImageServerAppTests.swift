import Foundation
import Hummingbird
import HummingbirdTesting
import ImageServerApp
import Imago
import ImagoCodecs
import ImagoServer
import ImagoTesting
import Testing

/// The app's image routes, in process through the router (no socket), with
/// ImagoTesting's origin double standing in for the image hosts (no DNS).
@Suite struct ImageServerAppTests {
    let key = SigningKey(key: Array("a test key".utf8), salt: Array("a test salt".utf8))
    let cat = TestImages.photo(width: 400, height: 300, seed: 7)   // a photo made in code, the same on every run
    let catURL = URL(string: "https://images.example/cat.png")!

    // snippet: image-server-app-test
    @Test func servesASignedThumbnail() async throws {
        let origin = MockOrigin()                                         // the image hosts: no DNS, no socket
        origin.stub(catURL, .image(try ImageEncoders.png().encode(cat)))
        var images = imageConfiguration(signingKey: key)                  // the app's own settings...
        images.prepareForTesting(origin: origin)                          // ...fetching from the double
        let app = Application(router: buildRouter(images: images))

        var options = ProcessingOptions()
        options.width = 100
        let path = "/img" + ImageServerPath(source: catURL, options: options).path(signedWith: key)

        try await app.test(.router) { client in
            let response = try await client.execute(uri: path, method: .get)
            #expect(response.status == .ok)
            let thumbnail = try ImageDecoders.all.decode(Data(response.body.readableBytesView))
            try ImageComparison(thumbnail, cat.resized(width: 100, height: 75)).require(.visuallyIdentical)
        }
        #expect(origin.requests.map(\.url) == [catURL])
    }
    // end snippet

    // snippet: image-server-app-hostile
    @Test func refusesWhatTheAppDoesNotServe() async throws {
        let origin = MockOrigin()
        origin.stub(catURL, .image(try ImageEncoders.png().encode(cat)))
        origin.stub("https://elsewhere.example/cat.png", .image(try ImageEncoders.png().encode(cat)))
        var images = imageConfiguration(signingKey: key)
        images.prepareForTesting(origin: origin)
        let app = Application(router: buildRouter(images: images))

        let unsigned = "/img" + ImageServerPath(source: catURL).path(signedWith: nil)
        let otherKey = SigningKey(key: Array("another key".utf8), salt: Array("a test salt".utf8))
        let forged = "/img" + ImageServerPath(source: catURL).path(signedWith: otherKey)
        let elsewhere = "/img" + ImageServerPath(source: URL(string: "https://elsewhere.example/cat.png")!).path(signedWith: key)

        try await app.test(.router) { client in
            for (path, status) in [(unsigned, 403), (forged, 403), (elsewhere, 404)] {   // 404: not an allowed host
                let response = try await client.execute(uri: path, method: .get)
                #expect(response.status.code == status, "\(path)")
            }
        }
        #expect(origin.requests.isEmpty)   // nothing reached the origins
    }
    // end snippet

    @Test func answersItsHealthCheck() async throws {
        let app = Application(router: buildRouter(images: .testing(origin: MockOrigin(), signingKey: key)))
        try await app.test(.router) { client in
            let response = try await client.execute(uri: "/health", method: .get)
            #expect(response.status == .ok)
            #expect(String(buffer: response.body) == "ok")
        }
    }
}
