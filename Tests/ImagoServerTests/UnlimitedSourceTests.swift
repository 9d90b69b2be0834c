#if Server && os(Linux)
import ChildProcesses
import Foundation
import HostileInputs
import HummingbirdTesting
import Imago
import ImagoCodecs
import ImagoServer
import ImagoSVG
import LoopbackServer
import Testing

/// imgproxy's `IMGPROXY_PNG_UNLIMITED` and `IMGPROXY_SVG_UNLIMITED`
/// (`ImageServerConfiguration.liftsPNGChunkLimits`, `.liftsSVGXMLLimits`):
/// off, a PNG over libspng's chunk limits and an SVG over libxml2's limits
/// for huge documents are refused with their statuses; on, they render;
/// and on, what stays bounded (the chunks' memory, the source's size, the
/// sanitiser's depth, the rasterizer's deadline and memory) still refuses
/// a hostile source, and the server serves the next request.
@Suite struct UnlimitedSourceTests {
    /// A PNG whose colour profile inflates to 20 MiB: over the standard 16 MiB, in a file of about 20 KB.
    static let largeProfile = try! HostileInputs.pngWithInflatingProfile(of: 20 << 20)
    /// A PNG whose colour profile inflates to 100 MiB, in a file of about 100 KB.
    static let inflatingBomb = try! HostileInputs.pngWithInflatingProfile(of: 100 << 20)
    /// 300 groups deep.
    static let deep = HostileInputs.nestedSVG(depth: 300)
    /// An embedded PNG in a `data:` address of more than 10 MB.
    static let largeEmbedded = try! HostileInputs.svgEmbeddingPNG(attributeBytes: 10_100_000)

    /// Whether most of `image` is red (what every test source draws).
    static func isRed(_ image: Image) -> Bool {
        let pixels = image.converted(to: .rgba8).pixels
        let red = stride(from: 0, to: pixels.count, by: 4).filter { pixels[$0] > 200 && pixels[$0 + 1] < 60 && pixels[$0 + 2] < 60 }
        return red.count * 2 > pixels.count / 4
    }

    // MARK: PNG

    @Test func aPNGOverTheChunkLimitsIsRefusedUnlessTheyAreLifted() async throws {
        #expect(Self.largeProfile.count < 100_000, "\(Self.largeProfile.count)")
        let origin = try await Fixture.origin(["/profile.png": .ok(Self.largeProfile, contentType: "image/png")])
        let path = Fixture.path("rs:fit:20:20", origin.url("/profile.png"), extension: "png")
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let response = try await client.execute(uri: path, method: .get)
            #expect(response.status.code == 422, "\(String(decoding: response.data, as: UTF8.self))")
            #expect(response.errorCode == "source_too_large")
            #expect(String(decoding: response.data, as: UTF8.self).contains("chunks"))
        }
        try await Fixture.withServer(Fixture.configuration { $0.liftsPNGChunkLimits = true }) { client, _ in
            let response = try await client.execute(uri: path, method: .get)
            #expect(response.status == .ok, "\(String(decoding: response.data, as: UTF8.self))")
            let image = try response.image()
            #expect((image.width, image.height) == (20, 15))
            #expect(Self.isRed(image))
            // Every path that reads the header reads it with the lifted limits: kept as stored, and described.
            let stored = try await client.execute(uri: Fixture.path("ar:0/scp:0", origin.url("/profile.png"), extension: "png"), method: .get)
            #expect(stored.status == .ok, "\(String(decoding: stored.data, as: UTF8.self))")
            let info = try await client.execute(uri: "/img/insecure/info/plain/" + origin.url("/profile.png").absoluteString
                .addingPercentEncoding(withAllowedCharacters: .alphanumerics)!, method: .get)
            #expect(info.status == .ok, "\(String(decoding: info.data, as: UTF8.self))")
        }
    }

    @Test func liftedPNGLimitsStillBoundInflationAndTheSourceSize() async throws {
        let origin = try await Fixture.origin(["/profile.png": .ok(Self.largeProfile, contentType: "image/png"),
                                               "/bomb.png": .ok(Self.inflatingBomb, contentType: "image/png")])
        // 4 megapixels: the chunks may take 64 MiB (4 bytes a pixel is less), so 100 MiB inflated is refused.
        let configuration = Fixture.configuration {
            $0.liftsPNGChunkLimits = true
            $0.maximumSourcePixels = 4_000_000
        }
        try await Fixture.withServer(configuration) { client, _ in
            for _ in 0..<2 {
                let response = try await client.execute(uri: Fixture.path("rs:fit:20:20", origin.url("/bomb.png"), extension: "png"), method: .get)
                #expect(response.status.code == 422, "\(String(decoding: response.data, as: UTF8.self))")
                #expect(String(decoding: response.data, as: UTF8.self).contains("lifted limit"))
                // The next request is served.
                #expect(try await client.execute(uri: Fixture.path("rs:fit:20:20", origin.url("/profile.png"), extension: "png"), method: .get).status == .ok)
            }
        }
        // The source's size limit holds: a source over it is refused before anything reads its chunks.
        try await Fixture.withServer(Fixture.configuration {
            $0.liftsPNGChunkLimits = true
            $0.maximumSourceBytes = 16 << 10
        }) { client, _ in
            let response = try await client.execute(uri: Fixture.path("", origin.url("/profile.png"), extension: "png"), method: .get)
            #expect(response.status.code == 422)
            #expect(response.errorCode == "source_too_large")
        }
    }

    // MARK: SVG

    @Test func theSanitiserLiftsLibxml2sLimitsOnlyWhenAsked() throws {
        #expect(Self.largeEmbedded.count > 10_000_000)
        let standard = SVGSanitizer()
        for (name, document) in [("embedded", Self.largeEmbedded),
                                 ("long text", Data(#"<svg \#(HostileInputs.svgNamespace)><desc>\#(String(repeating: "a", count: 10_500_000))</desc></svg>"#.utf8))] {
            do {
                _ = try standard.sanitized(document)
                Issue.record("\(name) passed the standard limits")
            } catch {
                if case .overXMLLimits = error {} else { Issue.record("\(name): \(error)") }
            }
            let lifted = try SVGSanitizer(liftsXMLLimits: true).sanitized(document)
            #expect(lifted.count > 10_000_000, "\(name)")
        }
        // Nesting is the sanitiser's own limit, raised apart.
        #expect(throws: SVGSanitizingError.tooDeep(limit: 256)) { try SVGSanitizer(liftsXMLLimits: true).sanitized(Self.deep) }
        let deep = try SVGSanitizer(maximumDepth: SVGSanitizer.liftedMaximumDepth, liftsXMLLimits: true).sanitized(Self.deep)
        #expect(String(decoding: deep, as: UTF8.self).contains(String(repeating: "<g>", count: 300)))
        // A document that is not well-formed is still malformed, not over the limits.
        do {
            _ = try standard.sanitized(Data(#"<svg \#(HostileInputs.svgNamespace)><g></svg>"#.utf8))
            Issue.record("a mismatched tag passed")
        } catch {
            if case .malformed = error {} else { Issue.record("\(error)") }
        }
    }

    @Test func theRasterizerLiftsLibrsvgsLimitsOnlyWhenAsked() async throws {
        // What librsvg itself refuses without RSVG_HANDLE_FLAG_UNLIMITED: nesting past 256 (the sanitiser would refuse it first).
        let document = try SVGSanitizer(maximumDepth: SVGSanitizer.liftedMaximumDepth, liftsXMLLimits: true).sanitized(Self.deep)
        var rasterizer = SVGRasterizerProcess(executable: SVGRasterizerProcess.defaultExecutable(), timeout: 60)
        do {
            _ = try await rasterizer.image(from: document)
            Issue.record("librsvg drew a document 300 deep with its limits on")
        } catch {
            guard case .couldNotLoad(let message) = error else { throw error }
            #expect(message.contains("depth"), "\(message)")
        }
        rasterizer.liftsXMLLimits = true
        #expect(Self.isRed(try await rasterizer.image(from: document)))
        // And the in-process rasterizer alike.
        #expect(throws: SVGRasterizingError.self) { try SVGRasterizer().image(from: document) }
        #expect(Self.isRed(try SVGRasterizer(liftsXMLLimits: true).image(from: document)))
    }

    @Test func anSVGOverLibxml2sLimitsIsRefusedUnlessTheyAreLifted() async throws {
        let origin = try await Fixture.origin(["/deep.svg": .ok(Self.deep, contentType: "image/svg+xml"),
                                               "/embedded.svg": .ok(Self.largeEmbedded, contentType: "image/svg+xml")])
        let standard = Fixture.configuration { $0.svgRasterizerTimeout = 60 }
        try await Fixture.withServer(standard) { client, _ in
            for format in ["png", nil] as [String?] {
                let deep = try await client.execute(uri: Fixture.path("", origin.url("/deep.svg"), extension: format), method: .get)
                #expect(deep.status.code == 422 && deep.errorCode == "undecodable", "\(format ?? "-"): \(String(decoding: deep.data, as: UTF8.self))")
                let large = try await client.execute(uri: Fixture.path("", origin.url("/embedded.svg"), extension: format), method: .get)
                #expect(large.status.code == 422 && large.errorCode == "source_too_large", "\(format ?? "-"): \(String(decoding: large.data, as: UTF8.self))")
            }
        }
        let lifted = Fixture.configuration {
            $0.svgRasterizerTimeout = 60
            $0.liftsSVGXMLLimits = true
        }
        try await Fixture.withServer(lifted) { client, _ in
            for source in ["/deep.svg", "/embedded.svg"] {
                let drawn = try await client.execute(uri: Fixture.path("", origin.url(source), extension: "png"), method: .get)
                #expect(drawn.status == .ok, "\(source): \(String(decoding: drawn.data, as: UTF8.self).prefix(300))")
                let image = try drawn.image()
                #expect((image.width, image.height) == (40, 30), "\(source)")
                #expect(Self.isRed(image), "\(source)")
                // Answered as SVG: sanitised, whole.
                let answered = try await client.execute(uri: Fixture.path("", origin.url(source), extension: nil), method: .get)
                #expect(answered.status == .ok, "\(source)")
                #expect(answered.header("Content-Type") == "image/svg+xml", "\(source)")
            }
        }
    }

    @Test func liftedSVGLimitsStillBoundDepthTimeAndMemory() async throws {
        // Only lifted limits let these in; the sanitiser's depth, the child's deadline and its memory stop them.
        let padding = #"<rect width="1" height="1" class="\#(String(repeating: "p", count: 10_200_000))"/>"#
        func padded(_ document: Data) -> Data {
            var text = String(decoding: document, as: UTF8.self)
            text.insert(contentsOf: padding, at: text.index(text.endIndex, offsetBy: -"</svg>".count))
            return Data(text.utf8)
        }
        let heavy = padded(SVGIsolationTests.heavyWithinBudget)
        let origin = try await Fixture.origin(["/deeper.svg": .ok(HostileInputs.nestedSVG(depth: 10_000), contentType: "image/svg+xml"),
                                               "/heavy.svg": .ok(heavy, contentType: "image/svg+xml"),
                                               "/plain.svg": .ok(SVGIsolationTests.plain, contentType: "image/svg+xml")])
        let configuration = Fixture.configuration {
            $0.liftsSVGXMLLimits = true
            $0.svgRasterizerTimeout = 1
        }
        try await Fixture.withServer(configuration) { client, _ in
            for (source, reason) in [("/deeper.svg", "more than 2048 deep"), ("/heavy.svg", "rasterizer failed")] {
                let response = try await client.execute(uri: Fixture.path("", origin.url(source), extension: "png"), method: .get)
                let message = String(decoding: response.data, as: UTF8.self)
                #expect(response.status.code == 422 && response.errorCode == "undecodable", "\(source): \(message)")
                // The heavy one gets through the XML parsers and is stopped at its deadline (or its CPU limit).
                #expect(message.contains(reason) && (source != "/heavy.svg" || message.contains("timeout") || message.contains("cpu_limit")),
                        "\(source): \(message)")
                let next = try await client.execute(uri: Fixture.path("", origin.url("/plain.svg"), extension: "png"), method: .get)
                #expect(next.status == .ok, "after \(source)")
            }
        }
        // A 6000x6000 surface (144 MB) over a 96 MiB child, in a document only lifted limits let in: the child fails
        // (out of memory, or libxml2 or cairo unable to allocate, as the limit is met), where 1 GiB draws it.
        let big = padded(Data(#"<svg \#(HostileInputs.svgNamespace) width="6000" height="6000"><rect width="10" height="10"/></svg>"#.utf8))
        let document = try SVGSanitizer(liftsXMLLimits: true).sanitized(big)
        var rasterizer = SVGRasterizerProcess(executable: SVGRasterizerProcess.defaultExecutable(), timeout: 60, memoryLimit: 96 << 20,
                                              liftsXMLLimits: true)
        let limited: Result<Int, SVGRasterizingError>
        do {
            limited = .success(try await rasterizer.image(from: document).width)
        } catch {
            limited = .failure(error)
        }
        if SanitizerRuntime.isLinked {
            // A sanitizer's runtime reserves terabytes of address space, so a sanitized child sets no limit (as in SVGIsolationTests).
            #expect((try? limited.get()) == 6000)
        } else {
            switch limited {
            case .success: Issue.record("a 144 MB surface was drawn within 96 MiB")
            case .failure(.processFailed(let failure)): #expect(failure.reason == .outOfMemory || failure.reason == .crash, "\(failure)")
            case .failure(.couldNotLoad), .failure(.couldNotRender): break
            case .failure(let error): Issue.record("\(error)")
            }
        }
        rasterizer.memoryLimit = 1 << 30
        #expect(try await rasterizer.image(from: document).width == 6000)
    }
}
#endif
