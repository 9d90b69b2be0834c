#if Server
import Foundation
import Imago

/// An image the server renders in place of a source it cannot load (one
/// that is missing, refused, unreachable, failing, too large or cut off),
/// as imgproxy's `IMGPROXY_FALLBACK_IMAGE_*` settings do: processed with
/// the request's own options and answered with ``status``.
///
/// Only a failure to load falls back. A path that is malformed, unsigned
/// or names a forbidden source is still refused, and a source that loads
/// but does not decode is still an error: those are the client's or the
/// origin's bugs, not gaps a placeholder should hide.
///
/// ```swift
/// configuration.fallbackImage = FallbackImage(data: placeholderPNG, status: 404, timeToLive: 60)
/// ```
public struct FallbackImage: Sendable {
    /// The encoded image (any format the server reads).
    public var data: Data
    /// The status of a fallback answer; `nil` answers with the status the
    /// failure itself has (imgproxy's `IMGPROXY_FALLBACK_IMAGE_HTTP_CODE=0`).
    public var status: Int?
    /// The `max-age` of a fallback answer, in seconds; `nil` (or 0) keeps
    /// the usual rules: the server's time to live for a 2xx or 3xx status,
    /// ``HTTPCaching/errorCacheControl`` for a 4xx or 5xx one.
    public var timeToLive: Int?

    /// A fallback of `data`, answered with `status` (200 by default) and
    /// cached for `timeToLive` seconds.
    public init(data: Data, status: Int? = 200, timeToLive: Int? = nil) {
        (self.data, self.status, self.timeToLive) = (data, status, timeToLive)
    }

    /// The failures a fallback answers: those of loading the source.
    static let answeredFailures: Set<String> = [
        ImageServerError.Code.sourceNotFound.name, ImageServerError.Code.sourceUnreachable.name,
        ImageServerError.Code.sourceIncomplete.name, ImageServerError.Code.sourceRefused(400).name,
        ImageServerError.Code.sourceTooLarge.name, ImageServerError.Code.sourceFailed.name,
        ImageServerError.Code.sourceTimedOut.name, ImageServerError.Code.sourceAccessDenied.name,
    ]

    /// Whether a request that failed with `failure` is answered with the fallback.
    static func answers(_ failure: ImageServerError) -> Bool {
        answeredFailures.contains(failure.code.name)
    }

    /// The source every fallback render is keyed by: one image, whatever the failed source.
    static let source = URL(string: "imago-fallback:image")!
}
#endif
