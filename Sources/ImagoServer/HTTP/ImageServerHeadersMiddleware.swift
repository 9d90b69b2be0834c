#if Server && canImport(Hummingbird)
import Foundation
import HTTPTypes
import Hummingbird

/// The headers imgproxy puts on every response, as a Hummingbird
/// middleware for the whole router (`imago serve` uses it): an
/// `X-Request-ID` (the client's when it is a safe token, else AWS Lambda's
/// request id, else a new one), the strict `Content-Security-Policy`, and
/// CORS headers when an origin is allowed (imgproxy's `IMGPROXY_ALLOW_ORIGIN`);
/// an `OPTIONS` request is answered 200 here.
///
/// ```swift
/// router.add(middleware: ImageServerHeadersMiddleware(allowedOrigin: "https://app.example.com"))
/// ```
@available(macOS 14, iOS 17, tvOS 17, visionOS 1, *)
public struct ImageServerHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The origin CORS allows (`Access-Control-Allow-Origin`), `*` for any; `nil`: no CORS headers.
    public var allowedOrigin: String?

    /// The policy every answer carries: nothing a browser opens from the server runs or loads.
    public static var contentSecurityPolicy: String { "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox" }

    /// Creates the middleware.
    public init(allowedOrigin: String? = nil) {
        self.allowedOrigin = allowedOrigin
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let id = RequestID.of(request.headers)
        var response: Response
        if request.method == .options {
            response = Response(status: .ok, headers: [.contentType: "text/plain"])
        } else {
            do {
                response = try await next(request, context)
            } catch {
                // An error the router answers itself (no route: 404) still gets the headers.
                guard let failure = error as? any HTTPResponseError else { throw error }
                response = try failure.response(from: request, context: context)
            }
        }
        if let name = RequestID.field { response.headers[name] = id }
        if response.headers[.contentSecurityPolicy] == nil { response.headers[.contentSecurityPolicy] = Self.contentSecurityPolicy }
        if let allowedOrigin {
            response.headers[.accessControlAllowOrigin] = allowedOrigin
            response.headers[.accessControlAllowMethods] = "GET, OPTIONS"
        }
        return response
    }
}

/// The `X-Request-ID` of an answer.
enum RequestID {
    /// The request's id: the client's `X-Request-ID` when it is 1 to 100
    /// letters, digits, `-` or `_`; else the `requestId` of AWS Lambda's
    /// `X-Amzn-Request-Context`; else 22 random base64url characters.
    static func of(_ headers: HTTPFields) -> String {
        if let name = field, let given = headers[name], isSafeID(given) { return given }
        if let name = lambdaContextField, let context = headers[name],
           let object = try? JSONSerialization.jsonObject(with: Data(context.utf8)) as? [String: Any],
           let id = object["requestId"] as? String, isSafeID(id) {
            return id
        }
        return make()
    }

    /// 22 random base64url characters (132 bits), from three draws of the
    /// system's generator (not one per byte: each draw is a system call).
    static func make() -> String {
        var random = SystemRandomNumberGenerator()
        let bits = (random.next(), random.next(), random.next()) as (UInt64, UInt64, UInt64)
        return String(unsafeUninitializedCapacity: 22) { characters in
            for index in 0..<22 {
                let word = index < 10 ? bits.0 : index < 20 ? bits.1 : bits.2
                characters[index] = base64URLAlphabet[Int(truncatingIfNeeded: word >> UInt64(6 * (index % 10))) & 63]
            }
            return 22
        }
    }

    private static let base64URLAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    static let field = HTTPField.Name("X-Request-ID")
    private static let lambdaContextField = HTTPField.Name("X-Amzn-Request-Context")

    static func isSafeID(_ text: String) -> Bool {
        (1...100).contains(text.utf8.count)
            && text.utf8.allSatisfy { $0.isASCIIAlphanumeric || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
    }
}

extension UInt8 {
    fileprivate var isASCIIAlphanumeric: Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self)
    }
}
#endif
