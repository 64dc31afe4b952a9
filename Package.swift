// swift-tools-version: 6.1
import PackageDescription

// Extension members are visible only in the files that import their module (SE-0444), so that
// a `String.contains` in a file without `import Foundation` is the standard library's: full
// Foundation's would link CoreFoundation and ICU into the `alcedo` executable.
let strictImports: [SwiftSetting] = [.enableUpcomingFeature("MemberImportVisibility")]

let package = Package(
    name: "Alcedo",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Alcedo", targets: ["Alcedo"]),
        .library(name: "AlcedoURLSession", targets: ["AlcedoURLSession"]),
        .library(name: "AlcedoRedis", targets: ["AlcedoRedis"]),
        .library(name: "AlcedoServer", targets: ["AlcedoServer"]),
        .executable(name: "alcedo", targets: ["alcedo"]),
    ],
    traits: [
        // Off by default: swift-otel and its gRPC and protobuf stack take longer to build than
        // Alcedo itself. `make release OTEL=1` (or `swift build --traits OpenTelemetry`) builds an
        // `alcedo` that exports request traces over OTLP (IMGPROXY_OPEN_TELEMETRY_ENABLE).
        .trait(name: "OpenTelemetry", description: "alcedo serve exports request traces over OTLP/HTTP and OTLP/gRPC (swift-otel)"),
    ],
    dependencies: [
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        // Hummingbird's response parts (NIOHTTPTypes); already in the graph through Hummingbird.
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        // Without Hummingbird's default traits: `ConfigurationSupport` (swift-configuration, unused
        // here) and `FullFoundation` (URL-encoded form dates through Foundation's DateFormatter,
        // unused) would add a package to every build and link more of Foundation.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // Request spans (a no-op tracer unless an exporter is bootstrapped) and W3C trace context.
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        // The OTLP exporter, only with the OpenTelemetry trait.
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0"),
        // `swift package generate-documentation --target Alcedo` builds the DocC catalogue.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // C shims: libjpeg's setjmp/longjmp error path, constants that do not import from macros,
        // and pixel loops the baseline x86-64 Swift target does not vectorise.
        .target(
            name: "CAlcedoCodecs",
            // libdeflate makes the PNG writer's zlib streams (alcedo_png_write.c).
            linkerSettings: [.linkedLibrary("jpeg"), .linkedLibrary("deflate")]
        ),
        .systemLibrary(
            name: "CPNG", pkgConfig: "libpng",
            providers: [.apt(["libpng-dev"])]
        ),
        .systemLibrary(
            name: "CGIF",
            providers: [.apt(["libgif-dev"])]
        ),
        .systemLibrary(
            name: "CWebP", pkgConfig: "libwebp",
            providers: [.apt(["libwebp-dev"])]
        ),
        .systemLibrary(
            name: "CLCMS2", pkgConfig: "lcms2",
            providers: [.apt(["liblcms2-dev"])]
        ),
        // libavif and libheif are loaded with dlopen on first use (see their headers).
        .target(name: "CAVIF", linkerSettings: [.linkedLibrary("dl"), .linkedLibrary("pthread")]),
        .target(name: "CHEIF", linkerSettings: [.linkedLibrary("dl"), .linkedLibrary("pthread")]),
        // libtiff, libjxl and librsvg are loaded with dlopen on first use too (see their headers);
        // their -dev packages give the headers.
        .target(name: "CTIFF", linkerSettings: [.linkedLibrary("dl"), .linkedLibrary("pthread")]),
        .target(name: "CJXL", linkerSettings: [.linkedLibrary("dl"), .linkedLibrary("pthread")]),
        .target(name: "CRSVG", linkerSettings: [.linkedLibrary("dl"), .linkedLibrary("pthread")]),
        .target(
            name: "Alcedo",
            dependencies: [
                "CAlcedoCodecs", "CPNG", "CGIF", "CWebP", "CLCMS2", "CAVIF", "CHEIF", "CTIFF",
                "CJXL", "CRSVG",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                // The trace context sent on with origin requests inside a span.
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strictImports
        ),
        // An ImageDataLoading on URLSession; separate so that Alcedo itself does not link
        // FoundationNetworking (and libcurl) on Linux.
        .target(name: "AlcedoURLSession", dependencies: ["Alcedo"]),
        // The shared cache tier on Redis: a RESP2 client on SwiftNIO, rendezvous hashing over nodes.
        .target(
            name: "AlcedoRedis",
            dependencies: [
                "Alcedo",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictImports
        ),
        // The image proxy: imgproxy-style URLs, signing, the source guard, negotiation,
        // HTTP caching headers and metrics, on Hummingbird 2. Embeddable as a router.
        .target(
            name: "AlcedoServer",
            dependencies: [
                "Alcedo",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                // The quiescing helper of the shared-port server (`--processes`).
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictImports
        ),
        .executableTarget(
            name: "alcedo",
            dependencies: [
                "Alcedo", "AlcedoRedis", "AlcedoServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "OTel", package: "swift-otel", condition: .when(traits: ["OpenTelemetry"])),
            ],
            // The demo's sample images are compiled in (Demo/EmbeddedSamples.swift, made from
            // Demo/Samples by scripts/embed-samples.py): the binary needs no file beside it.
            exclude: ["Demo/Samples"],
            swiftSettings: strictImports
        ),
        .testTarget(
            name: "AlcedoTests",
            dependencies: [
                "Alcedo", "AlcedoURLSession", "AlcedoTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("Fixtures")]
        ),
        // Kingfisher 8.11's own non-UI tests (XCTest), ported with only the import, the network
        // stubs and the test-image helpers changed (see Tests/KingfisherTests/PROVENANCE.md).
        // Swift 5 language mode: the test bodies are Kingfisher's, written for it.
        .testTarget(
            name: "KingfisherTests",
            dependencies: [
                "Alcedo",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            exclude: ["PROVENANCE.md", "EXCLUDED.md", "LICENSE-Kingfisher"],
            resources: [.copy("Resources")],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // What the test targets share: the seeded generator, a log capture.
        .target(
            name: "AlcedoTestSupport",
            dependencies: [.product(name: "Logging", package: "swift-log")],
            path: "Tests/AlcedoTestSupport"
        ),
        .testTarget(
            name: "AlcedoRedisTests",
            dependencies: [
                "Alcedo", "AlcedoRedis", "AlcedoServer", "AlcedoTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "AlcedoServerTests",
            dependencies: [
                "Alcedo", "AlcedoServer", "AlcedoTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("Fixtures")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
