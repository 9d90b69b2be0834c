// swift-tools-version: 6.2
// Fuzz targets for Imago's decoders, kept out of the main package because
// they only link with `-sanitize=fuzzer`. Run them with ../scripts/fuzz.
import PackageDescription

let package = Package(
    name: "ImagoFuzz",
    dependencies: [.package(name: "Imago", path: "..")],
    targets: [
        .executableTarget(
            name: "ImagoFuzz",
            dependencies: [.product(name: "ImagoCodecs", package: "Imago")],
            swiftSettings: [.swiftLanguageMode(.v6), .unsafeFlags(["-parse-as-library"])]
        ),
    ]
)
