// swift-tools-version: 6.2
// Fuzz targets for Imago, kept out of the main package because they only
// make sense instrumented with `-sanitize=fuzzer`. Each library holds
// libFuzzer's `LLVMFuzzerTestOneInput`; ../scripts/fuzz and
// ../scripts/fuzz-server link it with libFuzzer's own `main`.
//
// - ImagoFuzz: the decoders (../scripts/fuzz).
// - ImagoServerFuzz: the image server's URL parser and its SVG and CSS
//   sanitisers (../scripts/fuzz-server); it needs the root package's
//   `Server` trait, so it builds the server's dependency tree too.
import PackageDescription

let package = Package(
    name: "ImagoFuzz",
    products: [
        .library(name: "ImagoFuzz", type: .dynamic, targets: ["ImagoFuzz"]),
        .library(name: "ImagoServerFuzz", type: .dynamic, targets: ["ImagoServerFuzz"]),
    ],
    dependencies: [.package(name: "Imago", path: "..", traits: ["Server"])],
    targets: [
        .target(
            name: "ImagoFuzz",
            dependencies: [.product(name: "ImagoCodecs", package: "Imago")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .target(
            name: "ImagoServerFuzz",
            dependencies: [.product(name: "ImagoServer", package: "Imago"), .product(name: "ImagoSVG", package: "Imago")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
