#if Server
/// How the image server fetches `http` and `https` sources: imgproxy's
/// fetcher settings (`IMGPROXY_USER_AGENT`, `IMGPROXY_DOWNLOAD_TIMEOUT`,
/// `IMGPROXY_MAX_REDIRECTS`, `IMGPROXY_CLIENT_KEEP_ALIVE_TIMEOUT`,
/// `IMGPROXY_IGNORE_SSL_VERIFICATION`), with imgproxy's defaults.
///
/// ``userAgent`` and ``maximumRedirects`` apply whatever the transport
/// (the server sends the header and follows redirects itself); the others
/// configure the default transport, and a
/// ``ImageServerConfiguration/transport`` of your own keeps its own.
///
/// ```swift
/// var configuration = ImageServerConfiguration(keys: keys)
/// configuration.sourceFetching.userAgent = "thumbs/2.1 (+https://example.com/bot)"
/// configuration.sourceFetching.downloadTimeout = 8
/// ```
public struct SourceFetching: Sendable, Hashable {
    /// The `User-Agent` sent to origins and stores, on every redirect hop
    /// too; `nil` sends none. Default: `imago`.
    public var userAgent: String?
    /// Seconds a source's download may take, from the request to its last
    /// byte; past it the answer is `504 source_timed_out`. The request's own
    /// deadline (``ImageServerConfiguration/timeout``) bounds it too. Default: 5.
    public var downloadTimeout: Double
    /// How many redirects one source may follow; one more is
    /// `404 source_unreachable`. 0 follows none. Default: 10.
    public var maximumRedirects: Int
    /// Seconds an idle connection to an origin is kept for its next source.
    /// Default: 90.
    public var keepAliveTimeout: Double
    /// Whether an `https` origin's certificate must be valid for its name.
    /// `false` accepts any certificate (self-signed, expired, another
    /// name's): only for origins on a network you trust. Default: `true`.
    public var verifiesCertificates: Bool

    /// Creates settings; the defaults are imgproxy's, but for the user agent.
    public init(userAgent: String? = "imago", downloadTimeout: Double = 5, maximumRedirects: Int = 10,
                keepAliveTimeout: Double = 90, verifiesCertificates: Bool = true) {
        self.userAgent = userAgent
        self.downloadTimeout = downloadTimeout
        self.maximumRedirects = maximumRedirects
        self.keepAliveTimeout = keepAliveTimeout
        self.verifiesCertificates = verifiesCertificates
    }
}
#endif
