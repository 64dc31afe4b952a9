import Foundation
import AlcedoTestSupport

/// Reads encoded images with Pillow, the test environment's (`Tests/.venv-s3`, made by
/// `scripts/install-s3-test-tools.sh`), a reader apart from Alcedo's own decoders.
enum PillowReader {
    /// What `script` writes to standard output when run with the path of a file holding `data`
    /// (named with `suffix`) as its one argument.
    static func output(of script: String, for data: Data, suffix: String) throws -> Data {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-pillow-\(UUID().uuidString).\(suffix)")
        try data.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let process = Process()
        process.executableURL = MotoS3Server.python
        process.arguments = ["-c", script, file.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let bytes = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CocoaError(.fileReadCorruptFile) }
        return bytes
    }
}
