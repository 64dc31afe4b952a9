// swift-tools-version: 6.1
// Redis client benchmark: Alcedo's RESP client on SwiftNIO (through RedisSharedStorage, as the
// shared cache tier reads) against hiredis, Debian's C client (hiredis-get.c), on one local
// redis-server: GETs of 50 KB entries, one at a time and many in flight. Run with run.sh.
import PackageDescription

let package = Package(
    name: "RedisBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "Alcedo", path: "../..")],
    targets: [
        .executableTarget(
            name: "RedisClientBenchmark",
            dependencies: [
                .product(name: "Alcedo", package: "Alcedo"),
                .product(name: "AlcedoRedis", package: "Alcedo"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
