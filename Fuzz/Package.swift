// swift-tools-version: 6.2
// Fuzz targets for Imago's decoders, kept out of the main package because
// they only make sense instrumented with `-sanitize=fuzzer`. The library
// holds libFuzzer's `LLVMFuzzerTestOneInput`; ../scripts/fuzz links it
// with libFuzzer's own `main`. Run them with ../scripts/fuzz.
import PackageDescription

let package = Package(
    name: "ImagoFuzz",
    products: [.library(name: "ImagoFuzz", type: .dynamic, targets: ["ImagoFuzz"])],
    dependencies: [.package(name: "Imago", path: "..")],
    targets: [
        .target(
            name: "ImagoFuzz",
            dependencies: [.product(name: "ImagoCodecs", package: "Imago")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
