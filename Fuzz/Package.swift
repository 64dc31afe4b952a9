// swift-tools-version: 6.1
// The decode fuzz target: built with -sanitize=fuzzer,address by scripts/fuzz.sh, never by `swift test`.
import PackageDescription

let package = Package(
    name: "AlcedoFuzz",
    dependencies: [.package(name: "Alcedo", path: "..")],
    targets: [
        .executableTarget(
            name: "AlcedoFuzz",
            dependencies: [.product(name: "Alcedo", package: "Alcedo")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
    ],
    swiftLanguageModes: [.v6]
)
