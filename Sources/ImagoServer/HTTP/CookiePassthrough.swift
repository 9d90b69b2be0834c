#if Server
import Foundation

/// Which sources get a client's cookies, as imgproxy's cookie passthrough
/// decides: its cookies belong to the host the client asked (or
/// ``sameHost(as:)``'s base URL), so only a source on that host gets them,
/// as a browser's cookie jar would send them; ``all`` sends them to every
/// source (imgproxy's `IMGPROXY_COOKIE_PASSTHROUGH_ALL`). They never follow
/// a redirect to another host.
///
/// Cookies are passed on `raw` answers only: a rendered answer is shared by
/// every client that asks for it (merged renders, the output cache, the
/// result store), so it must not depend on one client's cookies.
public enum CookiePassthrough: Sendable, Hashable {
    /// To sources on the host of `base` (imgproxy's `IMGPROXY_COOKIE_BASE_URL`),
    /// or, when `nil`, on the host the client asked for (`X-Forwarded-Host`, else `Host`).
    case sameHost(as: URL?)
    /// To every source.
    case all

    /// The `Cookie` to send with a request for `source`, from the client's
    /// `request`; `nil` when none goes.
    func cookie(for source: URL, request: RequestHeaders) -> String? {
        guard let cookie = request["cookie"], !cookie.isEmpty else { return nil }
        switch self {
        case .all:
            return cookie
        case .sameHost(let base):
            let asked = base?.host ?? (request["x-forwarded-host"] ?? request["host"]).map(Self.hostWithoutPort)
            guard let asked, let host = source.host, host.lowercased() == asked.lowercased() else { return nil }
            return cookie
        }
    }

    /// `HOST` from `HOST:PORT` or `[V6]:PORT`.
    static func hostWithoutPort(_ text: String) -> String {
        if text.hasPrefix("["), let end = text.firstIndex(of: "]") { return String(text[text.index(after: text.startIndex)..<end]) }
        return String(text.split(separator: ":", maxSplits: 1).first ?? "")
    }
}
#endif
