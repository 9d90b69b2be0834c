// swift-tools-version: 6.1
//
// An upload service: a Vapor application whose handler takes an uploaded
// image, decodes it with ImagoCodecs under limits, makes a thumbnail with
// Imago's processing API and answers a JPEG or a PNG; tested in memory with
// VaporTesting (no socket).
//
// Copy this folder to start a service of your own; then depend on Imago by
// URL instead of by path:
//
//     .package(url: "https://github.com/imago/imago", from: "0.10.0"),
//
// In this repository, Tools/Package.swift also builds and tests these
// sources (its Sources/UploadService and Tests/UploadServiceTests are links
// to this folder's), so CI compiles no second copy of the dependencies.
import PackageDescription

let package = Package(
    name: "UploadService",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "Imago", path: "../.."),
        .package(url: "https://github.com/vapor/vapor", from: "4.122.3"),
    ],
    targets: [
        // The service: its routes and the upload handler.
        .target(
            name: "UploadService",
            dependencies: [
                .product(name: "Imago", package: "Imago"),
                .product(name: "ImagoCodecs", package: "Imago"),
                .product(name: "Vapor", package: "vapor"),
            ]
        ),
        // `swift run Run serve` serves it on 127.0.0.1:8080.
        .executableTarget(name: "Run", dependencies: ["UploadService", .product(name: "Vapor", package: "vapor")]),
        .testTarget(
            name: "UploadServiceTests",
            dependencies: [
                "UploadService",
                .product(name: "Imago", package: "Imago"),
                .product(name: "ImagoCodecs", package: "Imago"),
                .product(name: "ImagoTesting", package: "Imago"),
                .product(name: "ImagoTestingSupport", package: "Imago"),
                .product(name: "VaporTesting", package: "vapor"),
            ]
        ),
    ]
)
