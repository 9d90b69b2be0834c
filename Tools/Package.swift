// swift-tools-version: 6.2
//
// Imago's tools: the `imago` command-line tool (the one product), the test
// harness (`imago-harness`, not shipped) and the tests that need real
// servers and processes. They live apart from the library (the package one
// folder up) so that a user of the library resolves none of their
// dependencies. `./scripts/demo` and `./scripts/test` build from here.
import PackageDescription

// The span exporter (swift-otel) is left out when IMAGO_WITHOUT_OTLP is set:
// swift-otel 1.6.0 does not compile under the thread sanitizer with Swift 6.3
// (a region-isolation error, "sending 'logger' risks causing data races", in
// its batch log processor; the debug build is fine), so `scripts/test
// --sanitize=...` sets it. Without it the code under `#if OTLP` is left out
// and `imago serve` refuses an OTLP endpoint.
let exportsSpans = Context.environment["IMAGO_WITHOUT_OTLP"] == nil

// The example apps (Examples/ImageServerApp, Examples/UploadService) are
// packages of their own, for users to copy, and are built and tested here
// too (Sources/ and Tests/ hold links to their folders), so CI compiles
// their dependencies once, with the tools'. The Vapor one is left out when
// IMAGO_WITHOUT_VAPOR is set: `scripts/test --sanitize=...` sets it, since
// Vapor is the one package only it needs, and the sanitizer's build of it
// would cost more than its tests are worth there (they check a handler,
// not memory ordering).
let buildsVaporExample = Context.environment["IMAGO_WITHOUT_VAPOR"] == nil

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
] + (exportsSpans ? [.define("OTLP")] : [])

// The library's products, and the argument parser, as dependencies.
let imago = Target.Dependency.product(name: "Imago", package: "Imago")
let codecs = Target.Dependency.product(name: "ImagoCodecs", package: "Imago")
let testing = Target.Dependency.product(name: "ImagoTesting", package: "Imago")
let asyncHTTPClient = Target.Dependency.product(name: "ImagoAsyncHTTPClient", package: "Imago")
let server = Target.Dependency.product(name: "ImagoServer", package: "Imago")
let argumentParser = Target.Dependency.product(name: "ArgumentParser", package: "swift-argument-parser")
let hummingbird = Target.Dependency.product(name: "Hummingbird", package: "hummingbird")
/// What `imago serve` links beside the server: lifecycle, logging, the
/// Prometheus exporter and the OpenTelemetry (OTLP) span exporter.
let serving: [Target.Dependency] = [
    server, hummingbird,
    .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
    .product(name: "Prometheus", package: "swift-prometheus"),
    .product(name: "Metrics", package: "swift-metrics"),
    .product(name: "Logging", package: "swift-log"),
    // The listener of --so-reuseport (ReusePortListener).
    .product(name: "HummingbirdCore", package: "hummingbird"),
    .product(name: "NIOCore", package: "swift-nio"),
    .product(name: "NIOPosix", package: "swift-nio"),
] + (exportsSpans ? [.product(name: "OTel", package: "swift-otel")] : [])
/// What both executables link: the library, the loader and the shared command-line code.
let commandLine: [Target.Dependency] = ["CommandLineSupport", "SharedState", "LoopbackServer", imago, codecs, asyncHTTPClient, argumentParser]

let package = Package(
    name: "ImagoTools",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "imago", targets: ["ImagoCLI"]),
    ],
    dependencies: [
        .package(name: "Imago", path: "..", traits: ["AsyncHTTPClient", "Server", "SnapshotTesting"]),
        .package(url: "https://github.com/pointfreeco/swift-snapshot-testing", from: "1.19.7"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ] + (exportsSpans ? [
        // Spans over OTLP/HTTP and OTLP/gRPC (imgproxy's default protocol).
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.6.0", traits: ["OTLPHTTP", "OTLPGRPC"]),
    ] : []) + (buildsVaporExample ? [
        // Examples/UploadService's framework.
        .package(url: "https://github.com/vapor/vapor", from: "4.122.3"),
    ] : []),
    targets: [
        // A lock box for the tools' shared state.
        .target(name: "SharedState", swiftSettings: swiftSettings),
        // Child processes for the tests, awaited without blocking a thread of the test runner.
        .target(name: "ChildProcesses", swiftSettings: swiftSettings),
        // A running `imago serve` for the tests that start one.
        .target(name: "ServeProcess", dependencies: ["ChildProcesses"], swiftSettings: swiftSettings),
        // Test support: sources built to cost far more than their bytes, for the server's hostile tests.
        .target(name: "HostileInputs", dependencies: [imago, codecs, testing], swiftSettings: swiftSettings),
        // A scriptable HTTP/1.1 server on loopback: the demo's sample server, benchmarks, tests.
        .target(
            name: "LoopbackServer",
            dependencies: ["SharedState", imago, .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio")],
            swiftSettings: swiftSettings
        ),
        // Responses that break the rules on purpose (bombs, redirect loops, 429/503, lying ETags): tests and the soak only.
        .target(
            name: "FaultInjection",
            dependencies: ["LoopbackServer", "SharedState", imago],
            swiftSettings: swiftSettings
        ),
        // moto's S3-compatible server, started for tests.
        .target(
            name: "S3Peer",
            dependencies: ["ChildProcesses", "LoopbackServer", .product(name: "AsyncHTTPClient", package: "async-http-client"),
                           .product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: swiftSettings
        ),
        // Drawing images in a terminal with 24-bit colour half blocks.
        .target(name: "TerminalRendering", dependencies: [imago], swiftSettings: swiftSettings),
        // The album-list demo's models: app code written against Imago's protocols.
        .target(name: "AlbumList", dependencies: ["SharedState", imago], swiftSettings: swiftSettings),
        // The demo's sample album server (feed and generated artwork on loopback).
        .target(
            name: "SampleServer",
            dependencies: ["LoopbackServer", imago, codecs],
            swiftSettings: swiftSettings
        ),
        // What both executables share: output, JSON lines, failures, sources, atomic files, sample images.
        .target(
            name: "CommandLineSupport",
            dependencies: ["LoopbackServer", "SharedState", imago, codecs, asyncHTTPClient, argumentParser],
            swiftSettings: swiftSettings
        ),
        // The `imago` executable: user commands only. It depends on the SVG
        // rasteriser so that building it builds the child `imago serve`
        // runs from beside itself.
        .executableTarget(
            name: "ImagoCLI",
            dependencies: commandLine + ["SampleServer", "TerminalRendering", "AlbumList"] + serving
                + [.product(name: "imago-svg-rasterizer", package: "Imago")],
            swiftSettings: swiftSettings
        ),
        // The test harness (soak, cache crash worker, servers for comparisons): used by tests and scripts/, never shipped.
        .executableTarget(
            name: "imago-harness",
            dependencies: commandLine + ["FaultInjection"],
            path: "Sources/ImagoHarness",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ImagoCLITests",
            dependencies: ["ImagoCLI", "CommandLineSupport", "LoopbackServer", "TerminalRendering", "ChildProcesses", "ServeProcess", "HostileInputs", imago, codecs, testing, server],
            swiftSettings: swiftSettings
        ),
        // imgproxy's own tests, ported as tables (Cases/*.json), run against `imago serve`.
        .testTarget(
            name: "ImgproxyParityTests",
            dependencies: ["ImagoCLI", "LoopbackServer", "FaultInjection", "S3Peer", "ChildProcesses", "ServeProcess", imago, codecs, testing, server,
                           .product(name: "AsyncHTTPClient", package: "async-http-client")],
            exclude: ["Cases"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HarnessTests",
            dependencies: ["imago-harness", "LoopbackServer", "FaultInjection", "ChildProcesses", imago, codecs, testing],
            swiftSettings: swiftSettings
        ),
        // An example of testing app code with ImagoTesting alone.
        .testTarget(
            name: "AlbumListTests",
            dependencies: ["AlbumList", imago, testing],
            swiftSettings: swiftSettings
        ),
        // What ImageService and ImageLoading promise, run against the real
        // types and the doubles alike; public API only, from another package.
        .testTarget(
            name: "ContractTests",
            dependencies: [imago, codecs, testing],
            swiftSettings: swiftSettings
        ),
        // Every Swift snippet of the README and the DocC articles, compiled (and the tests among them run).
        .testTarget(
            name: "SnippetTests",
            dependencies: [imago, asyncHTTPClient, codecs, testing, server, hummingbird, "ChildProcesses",
                           .product(name: "ImagoTestingSupport", package: "Imago"), .product(name: "ImagoSnapshotTesting", package: "Imago"),
                           .product(name: "SnapshotTesting", package: "swift-snapshot-testing")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ImagoIntegrationTests",
            dependencies: [
                "LoopbackServer", "FaultInjection", "SharedState", imago, asyncHTTPClient, codecs, testing,
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Examples/ImageServerApp: a Hummingbird app mounting the image server,
        // tested through the router with ImagoTesting's origin double.
        .target(name: "ImageServerApp", dependencies: [server, hummingbird], swiftSettings: swiftSettings),
        .testTarget(
            name: "ImageServerAppTests",
            dependencies: ["ImageServerApp", imago, codecs, server, testing, hummingbird,
                           .product(name: "HummingbirdTesting", package: "hummingbird")],
            swiftSettings: swiftSettings
        ),
    ] + (buildsVaporExample ? [
        // Examples/UploadService: a Vapor upload handler, tested in memory with VaporTesting.
        .target(name: "UploadService", dependencies: [imago, codecs, .product(name: "Vapor", package: "vapor")], swiftSettings: swiftSettings),
        .testTarget(
            name: "UploadServiceTests",
            dependencies: ["UploadService", imago, codecs, testing, .product(name: "ImagoTestingSupport", package: "Imago"),
                           .product(name: "VaporTesting", package: "vapor")],
            swiftSettings: swiftSettings
        ),
    ] : [])
)
