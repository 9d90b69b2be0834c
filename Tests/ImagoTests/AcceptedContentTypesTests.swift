import Imago
import Testing

@Suite struct AcceptedContentTypesTests {
    @Test(arguments: ["image/png", "image/jpeg", "IMAGE/PNG", "Image/WebP; q=1", "image/gif ", "application/octet-stream", "APPLICATION/Octet-Stream", "binary/octet-stream", "Binary/Octet-Stream; charset=binary", "application/binary", "unknown/unknown"])
    func imagesAcceptImageTypesAndOctetStreamInAnyCase(type: String) {
        #expect(AcceptedContentTypes.images.accepts(contentType: type))
    }

    @Test func imagesAcceptAMissingOrBlankType() {
        #expect(AcceptedContentTypes.images.accepts(contentType: nil))
        #expect(AcceptedContentTypes.images.accepts(contentType: "  "))
    }

    @Test(arguments: ["text/html", "text/html; charset=utf-8", "application/json", "text/plain", "video/mp4", "imagex/png", "binary/html", "application/octet-streams"])
    func imagesRejectOtherTypes(type: String) {
        #expect(!AcceptedContentTypes.images.accepts(contentType: type))
    }

    @Test(arguments: [
        "application/json", "Application/JSON; charset=utf-8", "text/json", "application/vnd.api+json",
        // What JSON APIs really send: the iTunes feeds are text/javascript.
        "text/javascript; charset=utf-8", "application/javascript", "Application/X-JavaScript",
    ])
    func jsonAcceptsJSONTypes(type: String) {
        #expect(AcceptedContentTypes.json.accepts(contentType: type))
    }

    @Test(arguments: [
        "text/html", "text/html; charset=utf-8", "application/xhtml+xml", "text/plain", "text/css",
        "image/png", "application/octet-stream", "text/javascriptx", "application/ecmascript",
    ])
    func jsonRejectsOtherTypes(type: String) {
        #expect(!AcceptedContentTypes.json.accepts(contentType: type))
    }

    @Test func onlyMatchesListedTypesAndFamilies() {
        let rule = AcceptedContentTypes.only(["text/csv", "audio/*"])
        #expect(rule.accepts(contentType: "TEXT/CSV"))
        #expect(rule.accepts(contentType: "audio/ogg"))
        #expect(!rule.accepts(contentType: "text/plain"))
        #expect(!rule.accepts(contentType: nil))
        #expect(AcceptedContentTypes.only(["text/csv"], allowsMissing: true).accepts(contentType: nil))
    }
}
