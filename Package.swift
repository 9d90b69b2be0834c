// swift-tools-version: 6.2
//
// Imago, the library. A package that depends on it resolves two others,
// swift-log and swift-metrics (API packages with no dependencies of their
// own); the rest (SwiftNIO and AsyncHTTPClient, for `ImagoAsyncHTTPClient`;
// swift-crypto and Hummingbird for `ImagoServer`; the swift-distributed-tracing
// API, which both already use, for their spans) sit behind the
// `AsyncHTTPClient` and `Server` traits, which are off unless a user turns
// them on:
//
//     .package(url: "https://github.com/imago/imago", from: "0.10.0", traits: ["AsyncHTTPClient"])
//
// The `imago` tool, the test harness and the tests that need a real server
// live in the second package, `Tools/`, which depends on this one by path.
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

/// A product of the AsyncHTTPClient stack, linked only with the trait on.
func asyncHTTPClient(_ product: String, _ package: String) -> Target.Dependency {
    .product(name: product, package: package, condition: .when(traits: ["AsyncHTTPClient"]))
}

/// The server's tests build on Linux with the `Server` trait, like its HTTP side.
let serverTestsOnly: TargetDependencyCondition? = .when(platforms: [.linux], traits: ["Server"])

let package = Package(
    name: "Imago",
    // What the code needs: Swift concurrency (back-deployed to macOS 10.15 /
    // iOS 13) and FileHandle.read(upToCount:) (10.15.4 / 13.4). Time is
    // `Date` and `TimeInterval`, not `Duration`, and no `Synchronization`.
    platforms: [.macOS("10.15.4"), .iOS("13.4"), .tvOS("13.4"), .watchOS("6.2"), .visionOS(.v1)],
    products: [
        .library(name: "Imago", targets: ["Imago"]),
        .library(name: "ImagoCodecs", targets: ["ImagoCodecs"]),
        .library(name: "ImagoTesting", targets: ["ImagoTesting"]),
        // Assertions that fail the running test, in Swift Testing or XCTest
        // (which ImagoTesting does not import), and image snapshots.
        .library(name: "ImagoTestingSupport", targets: ["ImagoTestingSupport"]),
        // A swift-snapshot-testing strategy for images, on every platform;
        // empty unless the SnapshotTesting trait is on.
        .library(name: "ImagoSnapshotTesting", targets: ["ImagoSnapshotTesting"]),
        // Empty unless the AsyncHTTPClient trait is on.
        .library(name: "ImagoAsyncHTTPClient", targets: ["ImagoAsyncHTTPClient"]),
        // Empty unless the Server trait is on.
        .library(name: "ImagoServer", targets: ["ImagoServer"]),
        // SVG sources made safe (sanitised, then drawn in a child process);
        // empty unless the Server trait is on.
        .library(name: "ImagoSVG", targets: ["ImagoSVG"]),
        // The child process the server draws SVG sources in (librsvg, with
        // the Server trait on Linux; without them it refuses every document).
        .executable(name: "imago-svg-rasterizer", targets: ["imago-svg-rasterizer"]),
    ],
    traits: [
        .trait(name: "AsyncHTTPClient", description: "Builds ImagoAsyncHTTPClient, a network loader over AsyncHTTPClient (SwiftNIO)."),
        .trait(name: "Server", description: "Builds ImagoServer, the image server (imgproxy-style signed URLs).", enabledTraits: ["AsyncHTTPClient"]),
        .trait(name: "SnapshotTesting", description: "Builds ImagoSnapshotTesting, an image strategy for pointfreeco's swift-snapshot-testing."),
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        // TLS errors read by name (AsyncHTTPClient builds it already).
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.36.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0", traits: []),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        // The tracing API (no exporter): AsyncHTTPClient and Hummingbird
        // build it already, so the traits that use it add no package.
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        // Snapshot tests of images (the SnapshotTesting trait).
        .package(url: "https://github.com/pointfreeco/swift-snapshot-testing", from: "1.19.7"),
    ],
    targets: [
        // The core: Foundation and Dispatch, and the ecosystem's logging and
        // metrics APIs (no-ops until an application bootstraps a backend);
        // no system C library, only its own kernels.
        // C kernels for the resampler's inner loops (SSE2, NEON, or scalar).
        .target(name: "CImagoKernels"),
        // System calls Swift cannot make directly (openat2 through the variadic
        // syscall(2), malloc_trim, posix_spawn's closefrom, prctl): opening a
        // file beneath a directory, returning freed memory, spawning the SVG child.
        .target(name: "CImagoSystem"),
        .target(
            name: "Imago",
            dependencies: [
                "CImagoKernels",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        // The C codec libraries, found through pkg-config.
        .systemLibrary(
            name: "CTurboJPEG",
            pkgConfig: "libturbojpeg",
            providers: [.apt(["libturbojpeg0-dev"]), .brew(["jpeg-turbo"])]
        ),
        .systemLibrary(
            name: "CSpng",
            pkgConfig: "spng",
            providers: [.apt(["libspng-dev"]), .brew(["libspng"])]
        ),
        .systemLibrary(
            name: "CWebP",
            pkgConfig: "libwebpdemux",
            providers: [.apt(["libwebp-dev"]), .brew(["webp"])]
        ),
        // libdeflate: whole-buffer inflate and checksums for PNG's fast path.
        .systemLibrary(
            name: "CDeflate",
            pkgConfig: "libdeflate",
            providers: [.apt(["libdeflate-dev"]), .brew(["libdeflate"])]
        ),
        // Intel ISA-L's igzip: streamed inflate for large PNG thumbnails, twice zlib's speed.
        .systemLibrary(
            name: "CISAL",
            pkgConfig: "libisal",
            providers: [.apt(["libisal-dev"]), .brew(["isa-l"])]
        ),
        // zlib: run-length deflate of filtered PNG rows (Z_RLE), which libdeflate lacks.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        // Little CMS 2: embedded colour profiles converted to sRGB.
        .systemLibrary(
            name: "CLcms2",
            pkgConfig: "lcms2",
            providers: [.apt(["liblcms2-dev"]), .brew(["little-cms2"])]
        ),
        // libavif with dav1d: AVIF decoding (twice libheif's speed, Benchmarks/raw/next_codecs.c).
        // Its header is on the default path, and its pkg-config file adds a define SwiftPM refuses.
        .systemLibrary(
            name: "CAvif",
            providers: [.apt(["libavif-dev"]), .brew(["libavif"])]
        ),
        // libheif: HEIC (HEVC, through libde265) decoding, AVIF encoding (through libaom), and the thumbnail items of HEIC and AVIF files.
        .systemLibrary(
            name: "CHeif",
            pkgConfig: "libheif",
            providers: [.apt(["libheif-dev"]), .brew(["libheif"])]
        ),
        // libjxl: JPEG XL decoding. Its header is on the default path, and its
        // pkg-config file adds a define SwiftPM refuses (with a warning).
        .systemLibrary(
            name: "CJxl",
            providers: [.apt(["libjxl-dev"]), .brew(["jpeg-xl"])]
        ),
        // libtiff: TIFF decoding and encoding, read from and written to memory.
        .systemLibrary(
            name: "CTiff",
            pkgConfig: "libtiff-4",
            providers: [.apt(["libtiff-dev"]), .brew(["libtiff"])]
        ),
        // giflib ships a pkg-config file only in recent releases; its header is on the default path.
        .systemLibrary(
            name: "CGif",
            providers: [.apt(["libgif-dev"]), .brew(["giflib"])]
        ),
        // libxml2's SAX2 parser: the image server's SVG sanitiser reads documents with it.
        .systemLibrary(
            name: "CXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"]), .brew(["libxml2"])]
        ),
        // librsvg (with cairo): the image server's SVG sources, rasterised after sanitising.
        // Its shim declares what it uses: librsvg's pkg-config flags carry -pthread, which SwiftPM refuses.
        .systemLibrary(
            name: "CRsvg",
            providers: [.apt(["librsvg2-dev"]), .brew(["librsvg"])]
        ),
        // librsvg's document, sized and drawn, and the protocol the server speaks
        // to its SVG child process: shared by ImagoServer and imago-svg-rasterizer.
        .target(
            name: "ImagoSVGDrawing",
            dependencies: [.target(name: "CRsvg", condition: .when(platforms: [.linux], traits: ["Server"]))],
            swiftSettings: swiftSettings
        ),
        // Draws one SVG document in a child process with resource limits: a
        // panic, an abort, memory or time running out in librsvg costs one request.
        .executableTarget(
            name: "imago-svg-rasterizer",
            dependencies: ["ImagoSVGDrawing", "CImagoSystem"],
            path: "Sources/ImagoSVGRasterizer",
            swiftSettings: swiftSettings
        ),
        // JPEG, PNG (with APNG), GIF, WebP, AVIF, HEIC, JPEG XL and TIFF decoders and encoders over
        // the C libraries; BMP and ICO in Swift.
        .target(
            name: "ImagoCodecs",
            dependencies: ["Imago", "CImagoKernels", "CTurboJPEG", "CSpng", "CDeflate", "CISAL", "CZlib", "CWebP", "CGif", "CLcms2", "CAvif", "CHeif", "CJxl", "CTiff"],
            swiftSettings: swiftSettings
        ),
        // A network loader over AsyncHTTPClient (SwiftNIO), for servers and command-line tools.
        .target(
            name: "ImagoAsyncHTTPClient",
            dependencies: [
                "Imago",
                .product(name: "Logging", package: "swift-log"),
                asyncHTTPClient("AsyncHTTPClient", "async-http-client"),
                asyncHTTPClient("NIOCore", "swift-nio"),
                asyncHTTPClient("NIOHTTP1", "swift-nio"),
                asyncHTTPClient("NIOPosix", "swift-nio"),
                asyncHTTPClient("NIOHTTPCompression", "swift-nio-extras"),
                asyncHTTPClient("NIOSSL", "swift-nio-ssl"),
                asyncHTTPClient("Tracing", "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        // SVG sources made safe: the sanitiser (XML and CSS written back
        // from what is allowed only) and the client of the child process
        // that draws each document under limits (`imago-svg-rasterizer`).
        // Its sources compile only with the Server trait.
        .target(
            name: "ImagoSVG",
            dependencies: [
                "Imago",
                "ImagoCodecs",
                "CImagoSystem",
                .product(name: "Metrics", package: "swift-metrics"),
                .target(name: "CXML2", condition: .when(traits: ["Server"])),
                .target(name: "CRsvg", condition: .when(platforms: [.linux], traits: ["Server"])),
                .target(name: "ImagoSVGDrawing", condition: .when(platforms: [.linux], traits: ["Server"])),
            ],
            swiftSettings: swiftSettings
        ),
        // The image server: imgproxy-style paths and signatures,
        // the source guard. Its sources compile only with the Server trait.
        .target(
            name: "ImagoServer",
            dependencies: [
                "Imago",
                "ImagoCodecs",
                "ImagoAsyncHTTPClient",
                "CImagoSystem",
                .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: ["Server"])),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing", condition: .when(traits: ["Server"])),
                // Hummingbird asks for macOS 14: Linux only, so the library's
                // own minimum (macOS 10.15.4) holds on Apple platforms.
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(platforms: [.linux], traits: ["Server"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(platforms: [.linux], traits: ["Server"])),
                // The listener's connection guard is a channel handler in HummingbirdCore's HTTP/1 pipeline.
                .product(name: "HummingbirdCore", package: "hummingbird", condition: .when(platforms: [.linux], traits: ["Server"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(platforms: [.linux], traits: ["Server"])),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras", condition: .when(platforms: [.linux], traits: ["Server"])),
                "ImagoSVG",
            ],
            swiftSettings: swiftSettings
        ),
        // Test doubles, image comparison and fixtures shipped to users;
        // imports neither XCTest nor Testing. With the Server trait, also
        // the image server's doubles (an origin and a resolver), so its
        // sources under `#if Server` see ImagoServer.
        .target(
            name: "ImagoTesting",
            dependencies: ["Imago", .target(name: "ImagoServer", condition: .when(traits: ["Server"]))],
            swiftSettings: swiftSettings
        ),
        // What fails a test: assertImage and assertImageSnapshot, reported
        // to Swift Testing or XCTest, whichever runs (snapshots are PNG
        // files, written and read with ImagoCodecs).
        .target(name: "ImagoTestingSupport", dependencies: ["Imago", "ImagoCodecs", "ImagoTesting"], swiftSettings: swiftSettings),
        // Snapshotting<Image, Data>.image(tolerance:) for swift-snapshot-testing.
        .target(
            name: "ImagoSnapshotTesting",
            dependencies: [
                "Imago", "ImagoCodecs", "ImagoTesting",
                .product(name: "SnapshotTesting", package: "swift-snapshot-testing", condition: .when(traits: ["SnapshotTesting"])),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ImagoTests",
            dependencies: [
                "Imago", "ImagoTesting", "CImagoSystem", "ChildProcesses", "ImageFixtures",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Test support shared with Tools/ (where their sources live; these
        // folders are links to them): an HTTP origin on loopback, responses
        // that break the rules, a lock box, child processes awaited without
        // blocking (and tied to the test process), and hostile sources.
        .target(name: "SharedState", path: "Tests/Support/SharedState", swiftSettings: swiftSettings),
        // Images made in code for the processing tests, the library's and the server's.
        .target(name: "ImageFixtures", dependencies: ["Imago"], path: "Tests/Support/ImageFixtures", swiftSettings: swiftSettings),
        .target(name: "ChildProcesses", path: "Tests/Support/ChildProcesses", swiftSettings: swiftSettings),
        .target(
            name: "LoopbackServer",
            dependencies: [
                "SharedState", "Imago",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/Support/LoopbackServer",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FaultInjection",
            dependencies: ["LoopbackServer", "SharedState", "Imago"],
            path: "Tests/Support/FaultInjection",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "S3Peer",
            dependencies: [
                "ChildProcesses", "LoopbackServer",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Tests/Support/S3Peer",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HostileInputs",
            dependencies: ["Imago", "ImagoCodecs", "ImagoTesting"],
            path: "Tests/Support/HostileInputs",
            swiftSettings: swiftSettings
        ),
        // The image server's tests, in process through HummingbirdTesting's
        // router client (a few over a loopback socket, for what only a
        // socket shows): `swift test --traits Server`. Without the trait
        // (or off Linux, where the server's HTTP side is not built) the
        // target is empty.
        .testTarget(
            name: "ImagoServerTests",
            dependencies: [
                "Imago", "ImagoCodecs", "ImagoTesting", "ImagoServer", "ImagoSVG", "ImagoAsyncHTTPClient", "ImageFixtures",
                .target(name: "LoopbackServer", condition: serverTestsOnly),
                .target(name: "FaultInjection", condition: serverTestsOnly),
                .target(name: "SharedState", condition: serverTestsOnly),
                .target(name: "ChildProcesses", condition: serverTestsOnly),
                .target(name: "HostileInputs", condition: serverTestsOnly),
                .target(name: "S3Peer", condition: serverTestsOnly),
                .product(name: "Hummingbird", package: "hummingbird", condition: serverTestsOnly),
                .product(name: "HummingbirdTesting", package: "hummingbird", condition: serverTestsOnly),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: serverTestsOnly),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: serverTestsOnly),
                .product(name: "NIOCore", package: "swift-nio", condition: serverTestsOnly),
            ],
            // Read from the source tree (#filePath), like the codec fixtures.
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ImagoCodecsTests",
            dependencies: [
                "Imago", "ImagoCodecs", "ImagoTesting", "ImagoTestingSupport", "ImagoSnapshotTesting",
                "CDeflate", "CSpng", "CLcms2", "ChildProcesses",
                .product(name: "SnapshotTesting", package: "swift-snapshot-testing", condition: .when(traits: ["SnapshotTesting"])),
            ],
            // The snapshot references are read from the source tree (#filePath).
            exclude: ["__Snapshots__"],
            resources: [.copy("Resources")],
            swiftSettings: swiftSettings
        ),
    ]
)
