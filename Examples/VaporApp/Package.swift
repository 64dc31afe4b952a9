// swift-tools-version: 6.1
import PackageDescription

// A Vapor 4 app that serves processed images through Alcedo's library and mounts Alcedo's
// image proxy under /proxy. Built and tested on its own: `swift test` in this folder.
let package = Package(
    name: "AlcedoVaporExample",
    platforms: [.macOS(.v15)],
    dependencies: [
        // Alcedo itself, from this repository; in your app: .package(url: "<Alcedo's repository>", from: "…").
        .package(name: "Alcedo", path: "../.."),
        .package(url: "https://github.com/vapor/vapor.git", from: "4.122.3"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
    ],
    targets: [
        .target(
            name: "App",
            dependencies: [
                .product(name: "Alcedo", package: "Alcedo"),
                .product(name: "AlcedoServer", package: "Alcedo"),
                .product(name: "Vapor", package: "vapor"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            resources: [.copy("Images")]
        ),
        .executableTarget(name: "ThumbnailServer", dependencies: ["App"]),
        .testTarget(
            name: "AppTests",
            dependencies: ["App", .product(name: "VaporTesting", package: "vapor")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
