import Hummingbird
import ImagoServer

// snippet: image-server-app
/// The app's image settings: paths signed with `signingKey`, sources from
/// the app's own image hosts only.
public func imageConfiguration(signingKey: SigningKey) -> ImageServerConfiguration {
    var configuration = ImageServerConfiguration(signingKeys: [signingKey])
    configuration.sourcePolicy = SourcePolicy(allowedHosts: ["images.example", "*.cdn.example"])
    return configuration
}

/// The app's routes: a health check, and the image server under `/img`.
public func buildRouter(images: ImageServerConfiguration) -> Router<BasicRequestContext> {
    let router = Router()
    router.get("health") { _, _ in "ok" }
    ImageServer<BasicRequestContext>(configuration: images).addRoutes(to: router.group("img"))
    return router
}
// end snippet
