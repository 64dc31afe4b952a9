// swift-tools-version: 6.1
// Cache benchmarks: memory get/set against NSCache, disk store/retrieve against plain
// FileManager writes and reads of the same bytes, clean-up of 10,000 and 100,000 entries
// against a FileManager scan. Run with run.sh.
import PackageDescription

let package = Package(
    name: "CacheBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "Alcedo", path: "../..")],
    targets: [
        .executableTarget(
            name: "CacheBenchmarks",
            dependencies: [.product(name: "Alcedo", package: "Alcedo")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
