// swift-tools-version: 6.1
// The full pipeline benchmark: fetch from a loopback server, decode, downsample to 256x256,
// JPEG encode, store; cold and warm cache, against Pillow + requests and pyvips. Run with run.sh.
import PackageDescription

let package = Package(
    name: "PipelineBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Alcedo", path: "../.."),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    ],
    targets: [
        .executableTarget(
            name: "PipelineBenchmarks",
            dependencies: [
                .product(name: "Alcedo", package: "Alcedo"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
