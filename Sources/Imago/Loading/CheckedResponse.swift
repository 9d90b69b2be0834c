import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response that passed the checks run before any body is decoded, in
/// this order: the content type, then the status (for `http(s)` URLs, an
/// `HTTPURLResponse` with a status in 200...299; `file` URLs have none).
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
    package init(_ response: URLResponse, for url: URL?, accepting acceptedContentTypes: AcceptedContentTypes) throws(ResponseError) {
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
        self.url = url
        self.statusCode = http?.statusCode
        self.contentType = contentType
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
