// swift-tools-version: 6.2
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "Imago",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Imago", targets: ["Imago"]),
        .library(name: "ImagoCodecs", targets: ["ImagoCodecs"]),
        .library(name: "ImagoTesting", targets: ["ImagoTesting"]),
        .library(name: "ImagoAsyncHTTPClient", targets: ["ImagoAsyncHTTPClient"]),
        .executable(name: "imago", targets: ["imago"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
    ],
    targets: [
        // The core: Foundation and Dispatch only, no C library.
        .target(name: "Imago", swiftSettings: swiftSettings),
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
        // giflib ships a pkg-config file only in recent releases; its header is on the default path.
        .systemLibrary(
            name: "CGif",
            providers: [.apt(["libgif-dev"]), .brew(["giflib"])]
        ),
        // JPEG, PNG, GIF and WebP decoders and encoders over the C libraries.
        .target(
            name: "ImagoCodecs",
            dependencies: ["Imago", "CTurboJPEG", "CSpng", "CWebP", "CGif"],
            swiftSettings: swiftSettings
        ),
        // A network loader over AsyncHTTPClient (SwiftNIO), for servers and command-line tools.
        .target(
            name: "ImagoAsyncHTTPClient",
            dependencies: [
                "Imago",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
            ],
            swiftSettings: swiftSettings
        ),
        // Test doubles shipped to users; imports neither XCTest nor Testing.
        .target(name: "ImagoTesting", dependencies: ["Imago"], swiftSettings: swiftSettings),
        // A scriptable HTTP/1.1 server on loopback, for integration tests and the demo.
        .target(
            name: "LoopbackServer",
            dependencies: [
                "Imago",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Drawing images in a terminal with 24-bit colour half blocks.
        .target(name: "TerminalRendering", dependencies: ["Imago"], swiftSettings: swiftSettings),
        // The demo's sample album server (feed and generated artwork on loopback).
        .target(name: "SampleServer", dependencies: ["Imago", "ImagoCodecs", "LoopbackServer"], swiftSettings: swiftSettings),
        // The album-list demo's models: app code written against Imago's protocols.
        .target(name: "AlbumList", dependencies: ["Imago"], swiftSettings: swiftSettings),
        .executableTarget(
            name: "imago",
            dependencies: [
                "Imago",
                "ImagoCodecs",
                "ImagoAsyncHTTPClient",
                "LoopbackServer",
                "TerminalRendering",
                "SampleServer",
                "AlbumList",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ImagoTests",
            dependencies: ["Imago", "ImagoTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ImagoCodecsTests",
            dependencies: ["Imago", "ImagoCodecs", "ImagoTesting"],
            resources: [.copy("Resources")],
            swiftSettings: swiftSettings
        ),
        // An example of testing app code with ImagoTesting alone.
        .testTarget(
            name: "AlbumListTests",
            dependencies: ["AlbumList", "Imago", "ImagoTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ImagoCLITests",
            dependencies: ["imago", "Imago", "ImagoCodecs", "ImagoTesting", "LoopbackServer", "TerminalRendering"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ImagoIntegrationTests",
            dependencies: ["Imago", "ImagoAsyncHTTPClient", "ImagoCodecs", "ImagoTesting", "LoopbackServer"],
            swiftSettings: swiftSettings
        ),
    ]
)
