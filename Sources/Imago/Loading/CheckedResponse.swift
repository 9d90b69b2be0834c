import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response that passed the checks run before any body is decoded, in
/// this order: the content type, then the status (for `http(s)` URLs, an
/// `HTTPURLResponse` with a status in 200...299; `file` URLs have none),
/// then, for a `206`, that its `Content-Range` covers the whole body
/// (`bytes 0-(N-1)/N`, or `/*` with a `Content-Length` of N): a server
/// that answers a plain request with part of an image sends no image.
///
/// The one implementation of those checks: ``ResponseHandler``, the
/// pipeline's data stage and ``NetworkClient/image(for:options:progress:)``
/// all check responses through it.
package struct CheckedResponse: Sendable {
    /// The requested URL, or the response's when none was given.
    let url: URL?
    /// The HTTP status, when the response had one.
    let statusCode: Int?
    /// The `Content-Type`, as the server sent it.
    package let contentType: String?

    /// Checks `response`, stopping at the first failure.
    ///
    /// - Parameter url: The requested URL; its scheme says whether an HTTP
    ///   response is required. `nil` uses the response's URL.
    /// - Throws: ``ResponseError`` with the failing check's code.
    /// - Parameter partialContent: Whether a `206` for part of the body is
    ///   what was asked for (a request with a `Range`); otherwise it fails
    ///   with ``ResponseError/Code/partialContent``.
    package init(_ response: URLResponse, for url: URL?, accepting acceptedContentTypes: AcceptedContentTypes,
                 partialContent: Bool = false) throws(ResponseError) {
        let url = url ?? response.url
        let http = response as? HTTPURLResponse
        let contentType = http.map { $0.value(forHTTPHeaderField: "Content-Type") } ?? response.mimeType

        guard acceptedContentTypes.accepts(contentType: contentType) else {
            throw ResponseError(.unacceptableContentType, url: url, statusCode: http?.statusCode, contentType: contentType)
        }

        let scheme = url?.scheme?.lowercased()
        if scheme == "http" || scheme == "https" {
            guard http != nil else {
                throw ResponseError(.notHTTPResponse, url: url, contentType: contentType)
            }
        }
        // Any HTTP answer must be a success, whatever the URL's scheme (an
        // `s3://` source is answered over HTTP).
        if let http, !(200...299).contains(http.statusCode) {
            throw ResponseError(.unacceptableStatus, url: url, statusCode: http.statusCode, contentType: contentType)
        }
        if let http, http.statusCode == 206, !partialContent, !Self.coversWholeBody(http) {
            throw ResponseError(.partialContent, url: url, statusCode: 206, contentType: contentType)
        }
        self.url = url
        self.statusCode = http?.statusCode
        self.contentType = contentType
    }

    /// Whether a 206's `Content-Range` is the whole body: `bytes 0-END/SIZE`
    /// with END = SIZE - 1, SIZE being the total or, for `*`, the `Content-Length`.
    static func coversWholeBody(_ response: HTTPURLResponse) -> Bool {
        guard let range = response.value(forHTTPHeaderField: "Content-Range")?.trimmingCharacters(in: .whitespaces),
              range.hasPrefix("bytes "), let slash = range.firstIndex(of: "/") else { return false }
        let span = range[range.index(range.startIndex, offsetBy: 6)..<slash]
        let total = range[range.index(after: slash)...]
        let parts = span.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0] == "0", let end = Int(parts[1]),
              let size = total == "*" ? response.value(forHTTPHeaderField: "Content-Length").flatMap(Int.init) : Int(total)
        else { return false }
        return size > 0 && end == size - 1
    }

    /// Runs `decode` on the checked body; whatever it throws comes back as a
    /// ``ResponseError/Code/decodingFailed`` error that carries it unchanged.
    func decodeBody<Output>(_ decode: () throws -> Output) throws(ResponseError) -> Output {
        do {
            return try decode()
        } catch {
            throw ResponseError(.decodingFailed, url: url, statusCode: statusCode, contentType: contentType, underlying: error)
        }
    }
}
