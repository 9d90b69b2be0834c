// swift-tools-version: 6.1
//
// An app that serves images: a Hummingbird application that mounts Imago's
// image server under /img, with signed URLs only, and tests it in process
// through Hummingbird's router client (no socket, no DNS: ImagoTesting's
// origin double stands in for the image hosts).
//
// Copy this folder to start an app of your own; then depend on Imago by URL
// instead of by path:
//
//     .package(url: "https://github.com/imago/imago", from: "0.10.0", traits: ["Server"]),
//
// In this repository, Tools/Package.swift also builds and tests these
// sources (its Sources/ImageServerApp and Tests/ImageServerAppTests are
// links to this folder's), so CI compiles no second copy of the dependencies.
import PackageDescription

let package = Package(
    name: "ImageServerApp",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Imago", path: "../..", traits: ["Server"]),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
    ],
    targets: [
        // The app: its routes and its image settings.
        .target(
            name: "ImageServerApp",
            dependencies: [
                .product(name: "ImagoServer", package: "Imago"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        // `swift run Run` serves it on 127.0.0.1:8080 with the key and salt from IMAGO_KEY and IMAGO_SALT.
        .executableTarget(name: "Run", dependencies: ["ImageServerApp", .product(name: "Hummingbird", package: "hummingbird")]),
        .testTarget(
            name: "ImageServerAppTests",
            dependencies: [
                "ImageServerApp",
                .product(name: "Imago", package: "Imago"),
                .product(name: "ImagoCodecs", package: "Imago"),
                .product(name: "ImagoServer", package: "Imago"),
                .product(name: "ImagoTesting", package: "Imago"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ]
        ),
    ]
)
