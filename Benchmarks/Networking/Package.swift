// swift-tools-version: 6.1
// Networking benchmarks: bulk downloads from a loopback server against Python requests and
// curl, and the CPU used while requests wait on a stalled server. Run with run.sh.
import PackageDescription

let package = Package(
    name: "NetworkBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        // Named, so the product reference works whatever the checkout folder is called.
        .package(name: "Alcedo", path: "../.."),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    ],
    targets: [
        .executableTarget(
            name: "NetworkBenchmarks",
            dependencies: [
                .product(name: "Alcedo", package: "Alcedo"),
                .product(name: "AlcedoURLSession", package: "Alcedo"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
