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
///
/// Every folder is made inside one folder of the test process (``processFolder``), which is
/// removed when the process exits: a cache that finishes a background write after its test
/// dropped the folder makes it again, and that late copy goes with the process's folder.
final class TemporaryDirectory: Sendable {
    let url: URL

    init() throws {
        url = Self.processFolder.appendingPathComponent(UUID().uuidString, isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// `alcedo-tests-<process id>` in the system's temporary folder, removed at exit.
    static let processFolder: URL = {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("alcedo-tests-\(getpid())", isDirectory: true)
        atexit { try? FileManager.default.removeItem(at: TemporaryDirectory.processFolder) }
        return folder
    }()
}
