import Foundation
@testable import ImagoCLI
import Testing

/// `imago serve` reads its flags from `IMAGO_*` and imgproxy's variables;
/// a flag given on the command line wins.
@Suite struct ServeEnvironmentTests {
    func arguments(_ environment: [String: String], _ given: [String] = []) -> [String] {
        ServeEnvironment.arguments(given, environment: environment).arguments
    }

    @Test func everyFlagOfServeHasAVariable() throws {
        let help = Serve.helpMessage(columns: 400)
        let flags = Set(help.split(separator: "\n").compactMap { line -> String? in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("--") else { return nil }
            return String(trimmed.dropFirst(2).prefix { $0 != " " && $0 != "," && $0 != "<" })
        }).subtracting(["help", "version"])
        #expect(!flags.isEmpty)
        #expect(flags == Set(ServeEnvironment.flags.keys), "\(flags.symmetricDifference(Set(ServeEnvironment.flags.keys)))")
        // And --print-config shows each one.
        let printed = Set(try Serve.parse(["--unsigned"]).configurationLines().map { String($0.prefix { $0 != " " }) })
        #expect(printed == flags.subtracting(["print-config"]), "\(printed.symmetricDifference(flags))")
    }

    @Test func imagoVariablesBecomeFlags() {
        let result = arguments(["IMAGO_PORT": "9000", "IMAGO_AUTO_WEBP": "true", "IMAGO_AUTO_AVIF": "false",
                                "IMAGO_PRESET": "thumb=rs:fill:64:64, big=w:1000", "IMAGO_UNRELATED": "x"])
        #expect(result == ["--auto-webp", "--port", "9000", "--preset", "thumb=rs:fill:64:64", "--preset", "big=w:1000"])
    }

    @Test func imgproxysVariablesBecomeFlags() {
        let result = arguments([
            "IMGPROXY_BIND": ":8081", "IMGPROXY_KEY": "aa,bb", "IMGPROXY_SALT": "cc,dd", "IMGPROXY_TTL": "60",
            "IMGPROXY_MAX_SRC_RESOLUTION": "16.8", "IMGPROXY_ENABLE_WEBP_DETECTION": "true", "IMGPROXY_ENFORCE_AVIF": "1",
            "IMGPROXY_ALLOWED_SOURCES": "https://images.example.com/,https://*.cdn.example.com/path/,s3://", "IMGPROXY_LOCAL_FILESYSTEM_ROOT": "/srv",
            "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "true", "IMGPROXY_MAX_ANIMATION_FRAMES": "100",
        ])
        #expect(result == [
            "--allow-host", "images.example.com", "--allow-host", "*.cdn.example.com", "--allow-loopback-sources", "--auto-webp",
            "--enforce-avif", "--host", "0.0.0.0", "--key", "aa", "--key", "bb", "--local-root", "/srv", "--max-animation-frames", "100",
            "--max-src-resolution", "16.8", "--port", "8081", "--salt", "cc", "--salt", "dd", "--ttl", "60",
        ])
    }

    @Test func imgproxysS3VariablesBecomeFlags() {
        #expect(arguments(["IMGPROXY_USE_S3": "true", "IMGPROXY_S3_ENDPOINT": "http://127.0.0.1:9000", "IMGPROXY_S3_REGION": "eu-west-1"])
                == ["--s3-endpoint", "http://127.0.0.1:9000", "--s3-region", "eu-west-1", "--use-s3"])
    }

    /// imgproxy's GCS switch and endpoint become flags; its service-account
    /// key is not one (serve refuses it with --use-gcs and no HMAC key, and
    /// otherwise names it in the start-up warning).
    @Test func imgproxysGCSVariablesBecomeFlags() throws {
        let environment = ["IMGPROXY_USE_GCS": "true", "IMGPROXY_GCS_ENDPOINT": "http://127.0.0.1:4443/storage/v1/", "IMGPROXY_GCS_KEY": "{}"]
        let result = ServeEnvironment.arguments([], environment: environment)
        #expect(result.arguments == ["--gcs-endpoint", "http://127.0.0.1:4443/storage/v1/", "--use-gcs"])
        #expect(result.ignored == ["IMGPROXY_GCS_KEY"])
        #expect(arguments(["IMGPROXY_USE_GCS": "false"]).isEmpty)
        // Unset, the endpoint is GCS's own.
        let lines = try Serve.parse(["--unsigned"]).configurationLines()
        #expect(lines.contains("use-gcs = false") && lines.contains("gcs-endpoint = (https://storage.googleapis.com)"))
    }

    @Test func theCommandLineWinsThenImagoThenImgproxy() {
        let environment = ["IMAGO_PORT": "9000", "IMGPROXY_BIND": "127.0.0.1:8081", "IMGPROXY_TTL": "60", "IMAGO_TTL": "120"]
        #expect(arguments(environment, ["--port", "7000"]) == ["--host", "127.0.0.1", "--ttl", "120", "--port", "7000"])
        #expect(arguments(environment, ["--port=7000", "--ttl", "5"]) == ["--host", "127.0.0.1", "--port=7000", "--ttl", "5"])
    }

    @Test func imgproxysCachingAndServerVariablesBecomeFlags() {
        #expect(arguments(["IMGPROXY_ETAG_ENABLED": "false", "IMGPROXY_USE_ETAG": "true", "IMGPROXY_ETAG_BUSTER": "b1",
                           "IMGPROXY_CACHE_CONTROL_PASSTHROUGH": "1", "IMGPROXY_SECRET": "s", "IMGPROXY_PATH_PREFIX": "/img"])
                == ["--cache-control-passthrough", "--etag", "false", "--etag-buster", "b1", "--path-prefix", "/img", "--secret", "s"])
    }

    /// imgproxy 4 reads an empty variable as unset; an empty IMAGO_* value is a value (no Cache-Control on errors).
    @Test func emptyImgproxyVariablesAreUnsetAndEmptyImagoOnesAreValues() {
        #expect(arguments(["IMGPROXY_TTL": "", "IMGPROXY_QUALITY": ""]).isEmpty)
        #expect(arguments(["IMAGO_ERROR_CACHE_CONTROL": ""]) == ["--error-cache-control", ""])
    }

    @Test func presetsAreSplitByTheirSeparator() {
        #expect(arguments(["IMGPROXY_PRESETS": "a=w:10,h:5;b=h:4", "IMGPROXY_PRESETS_SEPARATOR": ";"])
                == ["--preset", "a=w:10,h:5", "--preset", "b=h:4"])
    }

    @Test func unknownImgproxyVariablesAreNamed() {
        let ignored = ServeEnvironment.arguments([], environment: ["IMGPROXY_USE_ABS": "true", "IMGPROXY_TTL": "5", "IMGPROXY_BIND": ":1"]).ignored
        #expect(ignored == ["IMGPROXY_USE_ABS"])
    }
}
