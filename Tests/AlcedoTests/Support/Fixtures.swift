import Foundation

/// The test fixtures bundled with the test target (see `Fixtures/PROVENANCE.md`).
enum Fixtures {
    /// The folder holding the fixtures.
    static let root: URL = Bundle.module.resourceURL!.appendingPathComponent("Fixtures")

    /// The URL of `path`, relative to the fixtures folder (for example `"libjpeg-turbo/testorig.jpg"`).
    static func url(_ path: String) -> URL { root.appendingPathComponent(path) }

    /// The bytes of `path`, relative to the fixtures folder.
    static func data(_ path: String) throws -> Data { try Data(contentsOf: url(path)) }

    /// The file names in folder `path` (sorted), optionally only those ending in `suffix`.
    static func files(in path: String, suffix: String = "") throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url(path).path)
            .filter { $0.hasSuffix(suffix) }
            .sorted()
    }
}

/// A temporary folder removed when the value is dropped.
final class TemporaryDirectory: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("alcedo-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}
