// swift-tools-version: 6.1
// AVIF encoding cost for serving: AVIF at each encoder speed against WebP on the same images. Run with run.sh.
import PackageDescription

let package = Package(
    name: "AVIFBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "Alcedo", path: "../..")],
    targets: [
        .executableTarget(
            name: "AVIFBenchmarks",
            dependencies: [.product(name: "Alcedo", package: "Alcedo")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
