#if Server && os(Linux)
import Foundation
import ImagoServer
import Testing

/// Every option of an imgproxy-style path (``ProcessingOptions``), its short form, and what malformed paths answer.
@Suite struct PathParsingTests {
    let source = "http%3A%2F%2Forigin.example%2Fa.jpg"
    let sourceURL = URL(string: "http://origin.example/a.jpg")!

    func parse(_ options: String, _ tail: String? = nil) throws -> ImageServerPath {
        try ImageServerPath(parsing: "/insecure/\(options.isEmpty ? "" : options + "/")\(tail ?? "plain/" + source)")
    }

    func rejects(_ path: String, mentioning words: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let error = #expect(throws: ImageServerError.self, sourceLocation: sourceLocation) { try ImageServerPath(parsing: path) }
        #expect(error?.code == .badOptions, sourceLocation: sourceLocation)
        #expect(error?.status == 404, sourceLocation: sourceLocation)   // imgproxy's "Invalid URL"
        #expect(error?.message.contains(words) == true, "\(error?.message ?? "")", sourceLocation: sourceLocation)
    }

    @Test func aPathWithNoOptionsKeepsTheDefaults() throws {
        let path = try parse("")
        #expect(path.signature == "insecure")
        #expect(path.signedPart == "/plain/\(source)")
        #expect(path.options == ProcessingOptions())
        #expect(path.source == sourceURL)
    }

    @Test func resizeAndItsShortForm() throws {
        for name in ["resize", "rs"] {
            let options = try parse("\(name):fill:300:400:1").options
            #expect(options.resizingType == .fill)
            #expect(options.width == 300)
            #expect(options.height == 400)
            #expect(options.enlarge)
        }
        // Empty arguments keep the defaults; a false fifth argument (extend) is accepted.
        let partial = try parse("rs:fill::200").options
        #expect((partial.resizingType, partial.width, partial.height, partial.enlarge) == (.fill, 0, 200, false))
        #expect(try parse("rs:auto:0:0:0:0").options.resizingType == .auto)
    }

    @Test func sizeAndTheSingleValueOptions() throws {
        for name in ["size", "s"] {
            let options = try parse("\(name):120:80:t").options
            #expect((options.width, options.height, options.enlarge) == (120, 80, true))
        }
        for (name, short) in [("width", "w"), ("height", "h")] {
            #expect(try parse("\(name):64").options == parse("\(short):64").options)
        }
        #expect(try parse("w:64/h:32").options.width == 64)
        #expect(try parse("w:64/h:32").options.height == 32)
        #expect(try parse("enlarge:true").options.enlarge)
        #expect(try parse("el:1").options.enlarge)
        #expect(try !parse("el:f").options.enlarge)
    }

    @Test func everyResizingType() throws {
        for type in ProcessingOptions.ResizingType.allCases {
            #expect(try parse("resizing_type:\(type.rawValue)").options.resizingType == type)
            #expect(try parse("rt:\(type.rawValue)").options.resizingType == type)
        }
    }

    @Test func everyGravity() throws {
        for gravity in ProcessingOptions.Gravity.allCases where gravity != .focusPoint {
            #expect(try parse("gravity:\(gravity.shortName)").options.gravity == gravity)
            #expect(try parse("g:\(gravity.shortName)").options.gravity == gravity)
        }
        #expect(try parse("g:no:0:0").options.gravity == .compass(.north))
    }

    @Test func qualityFormatAndBlur() throws {
        #expect(try parse("quality:75").options.quality == 75)
        #expect(try parse("q:100").options.quality == 100)
        #expect(try parse("q:0").options.quality == nil, "0 is the server's default")
        for (name, format) in [("jpg", ProcessingOptions.OutputFormat.jpeg), ("jpeg", .jpeg), ("png", .png), ("webp", .webp), ("avif", .avif)] {
            #expect(try parse("format:\(name)").options.format == format)
            #expect(try parse("f:\(name)").options.format == format)
        }
        #expect(try parse("blur:2.5").options.blur == 2.5)
        #expect(try parse("bl:3").options.blur == 3)
        #expect(try parse("bl:0").options.blur == nil)
    }

    @Test func theExtensionChoosesTheFormat() throws {
        #expect(try parse("", "plain/\(source)@png").options.format == .png)
        #expect(try parse("", "plain/\(source)@png").source == sourceURL)
        let base64 = "aHR0cDovL29yaWdpbi5leGFtcGxlL2EuanBn"
        #expect(try parse("", base64).source == sourceURL)
        #expect(try parse("", base64 + ".webp").options.format == .webp)
        // Base64 split over several segments is joined (imgproxy's docs do it).
        #expect(try parse("", "aHR0cDovL29y/aWdpbi5leGFt/cGxlL2EuanBn.jpg").source == sourceURL)
    }

    @Test func aPlainSourceKeepsItsQueryAndSlashes() throws {
        let path = try parse("", "plain/https://origin.example/a/b.png%3Fv%3D2")
        #expect(path.source.absoluteString == "https://origin.example/a/b.png?v=2")
    }

    @Test func malformedPathsAreBadRequests() {
        rejects("insecure/plain/\(source)", mentioning: "start with /")
        rejects("/insecure", mentioning: "no signature segment")
        rejects("//plain/\(source)", mentioning: "no signature segment")
        rejects("/insecure/rs:fit:10:10", mentioning: "no source")
        rejects("/insecure/plain/", mentioning: "no source")
        rejects("/insecure/plain/not-a-url", mentioning: "absolute URL")
        rejects("/insecure/plain/\(source)@tga", mentioning: "unknown output format")
        rejects("/insecure/%%%%%/plain/\(source)", mentioning: "base64")
        rejects("/insecure/!!notbase64", mentioning: "base64")
        rejects("/insecure/plain/http%3A%2F%2Fa%ZZ", mentioning: "percent-encoding")
    }

    @Test func unknownOptionsAndBadArgumentsAreBadRequests() {
        let tail = "plain/\(source)"
        rejects("/insecure/crop_box:10:10/\(tail)", mentioning: "unknown option")
        rejects("/insecure/rs:stretch:10:10/\(tail)", mentioning: "resizing type")
        rejects("/insecure/rs:fit:10:10:maybe/\(tail)", mentioning: "enlarge")
        rejects("/insecure/rs:fit:10:10:0:maybe/\(tail)", mentioning: "extend")
        rejects("/insecure/rs:fit:1:2:0:1:ce:0:0:9/\(tail)", mentioning: "arguments")
        rejects("/insecure/w/\(tail)", mentioning: "base64")
        rejects("/insecure/w:/\(tail)", mentioning: "width")
        rejects("/insecure/g:middle/\(tail)", mentioning: "gravity")
        rejects("/insecure/g:ce:10:5:1/\(tail)", mentioning: "offsets")
        rejects("/insecure/q:101/\(tail)", mentioning: "quality")
        rejects("/insecure/q:high/\(tail)", mentioning: "quality")
        rejects("/insecure/f:tga/\(tail)", mentioning: "output format")
        rejects("/insecure/bl:-1/\(tail)", mentioning: "blur")
        rejects("/insecure/bl:nan/\(tail)", mentioning: "blur")
        rejects("/insecure/bl:1000/\(tail)", mentioning: "blur")
    }

    @Test(arguments: ["-1", "8193", "1000000000", "99999999999999999999", "1e3", "0x10", "½", "12px"])
    func absurdSizesAreBadRequests(_ size: String) {
        rejects("/insecure/w:\(size)/plain/\(source)", mentioning: "width must be a whole number from 0 to 8192")
        rejects("/insecure/rs:fit:10:\(size)/plain/\(source)", mentioning: "height must be")
    }

    @Test func theLargestSideIsAccepted() throws {
        #expect(try parse("rs:force:8192:8192").options.width == 8192)
    }

    /// What proxies mangle is mended before the signature is checked, as imgproxy does.
    @Test func mangledPathsAreMended() throws {
        let escaped = try ImageServerPath(parsing: "/insecure/rs%3Afit%3A10%3A20/plain/http:/images.example/a.png")
        #expect(escaped.options.width == 10 && escaped.options.height == 20)
        #expect(escaped.source.absoluteString == "http://images.example/a.png")
        #expect(escaped.signedPart == "/rs:fit:10:20/plain/http://images.example/a.png")
        #expect(try ImageServerPath(parsing: "/insecure/plain/local:/a.png").source.absoluteString == "local:///a.png")
        #expect(try ImageServerPath(parsing: "/insecure/plain/https://images.example/a.png").source.absoluteString == "https://images.example/a.png")
    }

    @Test func urlRulesRewriteTheSource() throws {
        var rules = ImageServerURLRules()
        rules.replacements = try #require(ImageServerURLRules.replacements(parsing: "cdn://*/=https://${1}.example/;https://old.example/=https://new.example/"))
        #expect(try ImageServerPath(parsing: "/insecure/plain/cdn://eu/a.png", rules: rules).source.absoluteString == "https://eu.example/a.png")
        #expect(try ImageServerPath(parsing: "/insecure/plain/https://old.example/b.png", rules: rules).source.absoluteString
                == "https://new.example/b.png")
        // The base goes in front of whatever does not start with it, after the replacements, as in imgproxy.
        rules.replacements = []
        rules.baseURL = "https://base.example/"
        #expect(try ImageServerPath(parsing: "/insecure/plain/c/d.png", rules: rules).source.absoluteString == "https://base.example/c/d.png")
        #expect(try ImageServerPath(parsing: "/insecure/plain/https://base.example/e.png", rules: rules).source.absoluteString
                == "https://base.example/e.png")
        #expect(ImageServerURLRules.replacements(parsing: "a=b;") == nil)   // a trailing ; stops imgproxy too
        rules.argumentSeparator = ","
        #expect(try ImageServerPath(parsing: "/insecure/rs,fit,30,40/plain/https://x.example/a.png", rules: rules).options.width == 30)
        rules.base64IncludesFilename = true
        let encoded = Data("https://x.example/a.png".utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        #expect(try ImageServerPath(parsing: "/insecure/\(encoded).webp/cat.jpg", rules: rules).options.format == .webp)
    }

    @Test func errorBodiesAreTheDocumentedJSON() throws {
        let error = ImageServerError(.badOptions, "unknown option \"x\"")
        let body = try JSONSerialization.jsonObject(with: error.jsonBody) as? [String: [String: String]]
        #expect(body == ["error": ["code": "bad_options", "message": "unknown option \"x\""]])
        // imgproxy's statuses.
        let statuses = [ImageServerError.Code.badOptions, .badSignature, .forbiddenOption, .optionNotAllowed, .forbiddenSource,
                        .sourceNotFound, .sourceUnreachable, .sourceRefused(410), .sourceTooLarge, .sourceNotAnImage,
                        .undecodable, .sourceIncomplete, .sourceFailed, .saturated, .timedOut, .sourceTimedOut].map(\.status)
        #expect(statuses == [404, 403, 403, 404, 404, 404, 404, 410, 422, 422, 422, 422, 502, 429, 503, 504])
    }
}
#endif
