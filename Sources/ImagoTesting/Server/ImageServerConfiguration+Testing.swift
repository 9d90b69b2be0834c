#if Server
import Foundation
import Imago
import ImagoServer

extension ImageServerConfiguration {
    /// A configuration for tests that fetches every `http(s)` source from
    /// `origin`: unsigned paths (`/insecure/...`) are accepted unless a
    /// `signingKey` is given, the source guard checks every URL and address
    /// with the default `SourcePolicy` (public addresses only), the
    /// server's own log is off, and the deadlines are long enough for a
    /// loaded test machine (see ``prepareForTesting(origin:)``).
    ///
    /// ```swift
    /// let origin = MockOrigin()
    /// origin.stub("https://images.example/cat.jpg", .image(catJPEG))
    /// let images = ImageServer<BasicRequestContext>(configuration: .testing(origin: origin, signingKey: key))
    /// ```
    ///
    /// - Parameter signingKey: With a key, paths must be signed with it
    ///   (`ImageServerPath.path(signedWith:)`); without, any
    ///   signature segment is accepted.
    public static func testing(origin: MockOrigin, signingKey: SigningKey? = nil) -> ImageServerConfiguration {
        var configuration = ImageServerConfiguration(signingKeys: signingKey.map { [$0] } ?? [], acceptsUnsignedPaths: signingKey == nil)
        configuration.prepareForTesting(origin: origin)
        return configuration
    }

    /// Points this configuration (an app's own, say) at `origin` for a
    /// test, leaving its keys, source policy and options as they are:
    /// sources are fetched from `origin` (`transport`) and their host
    /// names resolved by its ``MockOrigin/resolver``; the server's own log
    /// (`logger`) is off (each request's line goes to the request
    /// context's logger, the application's); the render deadline
    /// (`timeout`) and the download timeout are two minutes, since the
    /// production defaults (10 s and 5 s) are for a server, not for a debug
    /// build beside other suites on a busy machine.
    ///
    /// ```swift
    /// var images = MyApp.imageConfiguration(key: key)
    /// images.prepareForTesting(origin: origin)
    /// ```
    public mutating func prepareForTesting(origin: MockOrigin) {
        transport = origin
        resolver = origin.resolver
        logger = .disabled
        timeout = 120
        sourceFetching.downloadTimeout = 120
    }
}
#endif
