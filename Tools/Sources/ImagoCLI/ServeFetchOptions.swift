import ArgumentParser
import CommandLineSupport
import ImagoServer

/// `imago serve`'s settings for fetching `http` and `https` sources:
/// imgproxy's fetcher variables of the same names, with its defaults.
struct ServeFetchOptions: ParsableArguments {
    @Option(help: "The User-Agent sent to origins; %current_version is replaced by imago's version (IMGPROXY_USER_AGENT).")
    var userAgent = "imago/%current_version"

    @Option(help: "The most seconds a source's download may take, request to last byte; past it: 504 (IMGPROXY_DOWNLOAD_TIMEOUT).")
    var downloadTimeout = 5.0

    @Option(help: "How many redirects a source may follow; one more: 404 (IMGPROXY_MAX_REDIRECTS).")
    var maxRedirects = 10

    @Option(help: "The most seconds an idle connection to an origin is kept for its next source (IMGPROXY_CLIENT_KEEP_ALIVE_TIMEOUT).")
    var clientKeepAliveTimeout = 90.0

    @Flag(help: "Accept any certificate from https origins (self-signed, expired, another name's): only on a network you trust (IMGPROXY_IGNORE_SSL_VERIFICATION).")
    var ignoreSslVerification = false

    func validate() throws {
        guard !userAgent.isEmpty, userAgent.utf8.count <= 1024, !userAgent.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
            throw ValidationError("--user-agent must be one line of at most 1024 bytes.")
        }
        guard downloadTimeout.isFinite, downloadTimeout > 0, downloadTimeout <= 3_600 else {
            throw ValidationError("--download-timeout must be seconds above 0, at most an hour.")
        }
        guard (0...100).contains(maxRedirects) else { throw ValidationError("--max-redirects must be 0 to 100.") }
        guard clientKeepAliveTimeout.isFinite, clientKeepAliveTimeout >= 0, clientKeepAliveTimeout <= 86_400 else {
            throw ValidationError("--client-keep-alive-timeout must be seconds from 0 to a day.")
        }
    }

    /// The settings for the server's configuration.
    var settings: SourceFetching {
        SourceFetching(userAgent: userAgent.replacingOccurrences(of: "%current_version", with: ImagoVersion.current),
                       downloadTimeout: downloadTimeout, maximumRedirects: maxRedirects,
                       keepAliveTimeout: clientKeepAliveTimeout, verifiesCertificates: !ignoreSslVerification)
    }

    /// The settings, one `flag = value` line each, for `--print-config`.
    var configurationLines: [(String, String)] {
        [("user-agent", settings.userAgent ?? ""), ("download-timeout", "\(downloadTimeout)"), ("max-redirects", "\(maxRedirects)"),
         ("client-keep-alive-timeout", "\(clientKeepAliveTimeout)"), ("ignore-ssl-verification", "\(ignoreSslVerification)")]
    }
}
