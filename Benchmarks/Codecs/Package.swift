// swift-tools-version: 6.1
// Codec benchmarks: decode (full and DCT-scaled), thumbnails, encode. Run with run.sh.
import PackageDescription

let package = Package(
    name: "CodecBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "Alcedo", path: "../..")],
    targets: [
        .executableTarget(
            name: "CodecBenchmarks",
            dependencies: [.product(name: "Alcedo", package: "Alcedo")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
