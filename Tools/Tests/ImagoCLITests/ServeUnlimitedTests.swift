import Foundation
import HostileInputs
import ImagoCodecs
@testable import ImagoCLI
import ImagoServer
import LoopbackServer
import ServeProcess
import Testing

/// `imago serve --png-unlimited` and `--svg-unlimited`, from imgproxy's
/// `IMGPROXY_PNG_UNLIMITED` and `IMGPROXY_SVG_UNLIMITED`: read from the
/// environment, set on the server's configuration, shown by
/// `--print-config`, and, end to end, what lets a PNG over libspng's chunk
/// limits and an SVG nested past libxml2's depth through.
@Suite struct ServeUnlimitedTests {
    func arguments(_ environment: [String: String]) -> [String] {
        ServeEnvironment.arguments([], environment: environment).arguments
    }

    @Test func imgproxysUnlimitedVariablesBecomeFlags() {
        #expect(arguments(["IMGPROXY_PNG_UNLIMITED": "true", "IMGPROXY_SVG_UNLIMITED": "1"]) == ["--png-unlimited", "--svg-unlimited"])
        #expect(arguments(["IMGPROXY_PNG_UNLIMITED": "false", "IMGPROXY_SVG_UNLIMITED": ""]).isEmpty)
        #expect(arguments(["IMAGO_PNG_UNLIMITED": "yes"]) == ["--png-unlimited"])
        #expect(arguments(["IMGPROXY_SVG_UNLIMITED": "true"]) == ["--svg-unlimited"])
        // Read, so not named in the start-up warning any more.
        let ignored = ServeEnvironment.arguments([], environment: ["IMGPROXY_PNG_UNLIMITED": "true", "IMGPROXY_SVG_UNLIMITED": "true"]).ignored
        #expect(ignored.isEmpty, "\(ignored)")
    }

    @Test func theFlagsSetTheConfigurationAndArePrinted() throws {
        var configuration = ImageServerConfiguration()
        let standard = try Serve.parse(["--unsigned"])
        standard.imageDefaults.apply(to: &configuration)
        #expect(!configuration.liftsPNGChunkLimits && !configuration.liftsSVGXMLLimits)
        #expect(standard.configurationLines().contains("png-unlimited = false"))
        #expect(standard.configurationLines().contains("svg-unlimited = false"))
        let lifted = try Serve.parse(ServeEnvironment.arguments(["--unsigned"], environment: ["IMGPROXY_PNG_UNLIMITED": "true", "IMGPROXY_SVG_UNLIMITED": "true"]).arguments)
        lifted.imageDefaults.apply(to: &configuration)
        #expect(configuration.liftsPNGChunkLimits && configuration.liftsSVGXMLLimits)
        #expect(lifted.configurationLines().contains("png-unlimited = true"))
        #expect(lifted.configurationLines().contains("svg-unlimited = true"))
    }

    @Test func imagoServeLetsThemThroughOnlyWithImgproxysVariables() async throws {
        let origin = try await LoopbackServer.start(routes: [
            "/profile.png": .ok(try HostileInputs.pngWithInflatingProfile(of: 20 << 20), contentType: "image/png"),
            "/deep.svg": .ok(HostileInputs.nestedSVG(depth: 300), contentType: "image/svg+xml"),
        ])
        func path(_ source: String) -> String {
            "/insecure/rs:fit:20:20/plain/" + origin.url(source).absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! + "@png"
        }
        let standard = try await ServeProcess(["--unsigned", "--allow-private-networks"])
        #expect(try await standard.get(path("/profile.png")).status == 422)
        #expect(try await standard.get(path("/deep.svg")).status == 422)
        #expect(await standard.stop() == 0)
        let lifted = try await ServeProcess(["--unsigned", "--allow-private-networks"],
                                            environment: ["IMGPROXY_PNG_UNLIMITED": "true", "IMGPROXY_SVG_UNLIMITED": "true"])
        for source in ["/profile.png", "/deep.svg"] {
            let response = try await lifted.get(path(source))
            #expect(response.status == 200, "\(source): \(String(decoding: response.body, as: UTF8.self)) \(lifted.log)")
            let image = try ImageDecoders.all.decode(response.body)
            #expect((image.width, image.height) == (20, 15), "\(source)")
        }
        #expect(!lifted.log.contains("IMGPROXY_PNG_UNLIMITED"), "not warned about: \(lifted.log)")
        #expect(await lifted.stop() == 0)
        try await origin.stop()
    }
}
