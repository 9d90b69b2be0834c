import Foundation
import Imago
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A class-backed error, so tests can check that the very same instance comes back.
final class IdentityError: Error, CustomStringConvertible {
    let name: String
    init(_ name: String = "identity") { self.name = name }
    var description: String { "IdentityError(\(name))" }
}

func httpResponse(_ url: URL, status: Int, contentType: String?) -> HTTPURLResponse {
    HTTPURLResponse(
        url: url,
        statusCode: status,
        httpVersion: "HTTP/1.1",
        headerFields: contentType.map { ["Content-Type": $0] } ?? [:]
    )!
}

let exampleURL = URL(string: "https://images.example.com/cat.png")!
