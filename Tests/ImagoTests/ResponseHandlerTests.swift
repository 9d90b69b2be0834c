import Foundation
import Imago
import ImagoTesting
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The response contract: which responses are accepted, in which order the checks run,
/// and what the errors carry.
@Suite struct ResponseHandlerTests {
    let decoder: MockImageDecoder
    let handler: ResponseHandler<Image>
    let body = TestImages.pngSignature

    init() {
        decoder = MockImageDecoder(returning: TestImages.solid(width: 2, height: 2))
        handler = .image(decoder: decoder)
    }

    /// The error handling `response` throws; the test fails when it throws none, or another type.
    private func responseError(_ response: URLResponse, url: URL = exampleURL,
                               sourceLocation: SourceLocation = #_sourceLocation) throws -> ResponseError {
        try #require(throws: ResponseError.self, sourceLocation: sourceLocation) { try handler.handle(body, response: response, for: url) }
    }

    @Test(arguments: [200, 201, 203, 204, 299])
    func acceptsEveryStatusFrom200Through299(status: Int) throws {
        let image = try handler.handle(body, response: httpResponse(exampleURL, status: status, contentType: "image/png"), for: exampleURL)
        #expect(image == TestImages.solid(width: 2, height: 2))
    }

    /// A 206 is accepted only when its `Content-Range` is the whole body
    /// (imgproxy's check): part of an image is not an image.
    @Test(arguments: [("bytes 0-9/10", nil, true), ("bytes 0-9/*", "10", true), ("bytes 0-8/10", nil, false), ("bytes 1-9/10", nil, false),
                      ("bytes */10", nil, false), ("bytes 0-9/*", "11", false), ("bytes 0-0/0", nil, false), ("items 0-9/10", nil, false),
                      (nil, nil, false)] as [(String?, String?, Bool)])
    func aPartialResponseIsAcceptedOnlyWhenItIsTheWholeBody(contentRange: String?, length: String?, accepted: Bool) throws {
        var fields = ["Content-Type": "image/png"]
        if let contentRange { fields["Content-Range"] = contentRange }
        if let length { fields["Content-Length"] = length }
        let response = HTTPURLResponse(url: exampleURL, statusCode: 206, httpVersion: "HTTP/1.1", headerFields: fields)!
        if accepted {
            #expect(throws: Never.self, "\(contentRange ?? "no Content-Range")") {
                try handler.handle(body, response: response, for: exampleURL)
            }
        } else {
            #expect(try responseError(response).code == .partialContent, "\(contentRange ?? "no Content-Range")")
        }
    }

    @Test(arguments: [100, 101, 199, 300, 301, 302, 304, 307, 400, 403, 404, 429, 500, 503, 599])
    func rejectsEveryOtherStatusWithAnErrorCarryingIt(status: Int) throws {
        let error = try responseError(httpResponse(exampleURL, status: status, contentType: "image/png"))
        #expect(error.code == .unacceptableStatus)
        #expect(error.statusCode == status)
        #expect(error.url == exampleURL)
        #expect(decoder.calls.isEmpty)
    }

    @Test(arguments: ["http://example.com/a.png", "https://example.com/a.png", "HTTPS://example.com/a.png"])
    func rejectsANonHTTPResponseForAnHTTPURL(string: String) throws {
        let url = URL(string: string)!
        let plain = URLResponse(url: url, mimeType: "image/png", expectedContentLength: 8, textEncodingName: nil)
        let error = try responseError(plain, url: url)
        #expect(error.code == .notHTTPResponse)
        #expect(decoder.calls.isEmpty)
    }

    @Test func fileURLsHaveNoStatusAndSkipTheStatusCheck() throws {
        let url = URL(fileURLWithPath: "/tmp/cat.png")
        let plain = URLResponse(url: url, mimeType: nil, expectedContentLength: 8, textEncodingName: nil)
        _ = try handler.handle(body, response: plain, for: url)
        #expect(decoder.calls.count == 1)
    }

    @Test(arguments: ["IMAGE/PNG", "Image/Png", "image/PNG; charset=binary"])
    func contentTypeIsComparedCaseInsensitively(type: String) throws {
        _ = try handler.handle(body, response: httpResponse(exampleURL, status: 200, contentType: type), for: exampleURL)
        #expect(decoder.calls.count == 1)
    }

    @Test(arguments: ["application/octet-stream", "binary/octet-stream", nil] as [String?])
    func octetStreamOrMissingTypeLetsTheBytesDecide(type: String?) throws {
        _ = try handler.handle(body, response: httpResponse(exampleURL, status: 200, contentType: type), for: exampleURL)
        #expect(decoder.calls.map(\.data) == [body])
    }

    @Test(arguments: ["text/html", "text/html; charset=UTF-8", "application/json", "text/plain"])
    func nonImageContentTypesFailWithTheType(type: String) throws {
        let error = try responseError(httpResponse(exampleURL, status: 200, contentType: type))
        #expect(error.code == .unacceptableContentType)
        #expect(error.contentType == type)
        #expect(decoder.calls.isEmpty)
    }

    @Test func contentTypeIsCheckedBeforeTheStatus() throws {
        // A 500 with an HTML page fails on its content type: the status check never runs,
        // but the error still carries the status.
        let error = try responseError(httpResponse(exampleURL, status: 500, contentType: "text/html"))
        #expect(error.code == .unacceptableContentType)
        #expect(error.statusCode == 500)
    }

    @Test func contentTypeIsCheckedBeforeTheHTTPCheck() throws {
        let plain = URLResponse(url: exampleURL, mimeType: "text/html", expectedContentLength: 8, textEncodingName: nil)
        #expect(try responseError(plain).code == .unacceptableContentType)
    }

    @Test func decoderIsNotCalledWhenTheStatusFails() throws {
        _ = try responseError(httpResponse(exampleURL, status: 404, contentType: "image/png"))
        #expect(decoder.calls.isEmpty)
    }

    @Test func decoderReceivesTheBodyAndOptionsUnchanged() throws {
        let options = ImageDecodingOptions(maximumPixelCount: 1234, frameIndex: 2, maximumPixelSize: 64)
        let handler = ResponseHandler<Image>.image(decoder: decoder, options: options)
        _ = try handler.handle(body, response: httpResponse(exampleURL, status: 200, contentType: "image/png"), for: exampleURL)
        #expect(decoder.calls.map(\.data) == [body])
        #expect(decoder.calls.map(\.options) == [options])
    }

    @Test func decoderErrorPassesThroughUnchanged() throws {
        let original = IdentityError("codec")
        decoder.setResult(.failure(original))
        let error = try responseError(httpResponse(exampleURL, status: 200, contentType: "image/png"))
        #expect(error.code == .decodingFailed)
        #expect(error.statusCode == 200)
        #expect((error.underlying as? IdentityError) === original)
    }

    @Test func urlDefaultsToTheResponseURL() throws {
        let error = try #require(throws: ResponseError.self) {
            try handler.handle(body, response: httpResponse(exampleURL, status: 404, contentType: "image/png"))
        }
        #expect(error.code == .unacceptableStatus)
        #expect(error.url == exampleURL)
    }

    @Test func jsonHandlerDecodesAndRejectsOtherTypes() throws {
        struct Album: Decodable, Equatable { let name: String }
        let handler = ResponseHandler<Album>.json()
        let json = Data(#"{"name":"Blue"}"#.utf8)
        let ok = try handler.handle(json, response: httpResponse(exampleURL, status: 200, contentType: "application/json"))
        #expect(ok == Album(name: "Blue"))
        let error = try #require(throws: ResponseError.self) {
            try handler.handle(json, response: httpResponse(exampleURL, status: 200, contentType: "text/html"))
        }
        #expect(error.code == .unacceptableContentType)
    }

    @Test func jsonDecodingErrorIsTheDecodersOwnError() throws {
        struct Album: Decodable { let name: String }
        let handler = ResponseHandler<Album>.json()
        let error = try #require(throws: ResponseError.self) {
            try handler.handle(Data(#"{"title":"Blue"}"#.utf8), response: httpResponse(exampleURL, status: 200, contentType: "application/json"))
        }
        #expect(error.code == .decodingFailed)
        guard case .keyNotFound(let key, _)? = error.underlying as? DecodingError else {
            Issue.record("expected DecodingError.keyNotFound, got \(String(describing: error.underlying))")
            return
        }
        #expect(key.stringValue == "name")
    }

    @Test func errorsDescribeTheSourceAndReason() throws {
        let error = try responseError(httpResponse(exampleURL, status: 404, contentType: "image/png"))
        #expect(error.description == "https://images.example.com/cat.png: HTTP status 404")
    }
}
