import AlcedoTestSupport
import Foundation

/// The `alcedo` under test (``AlcedoBinary``).
enum AlcedoExecutable {
    static var url: URL? { AlcedoBinary.isAvailable ? AlcedoBinary.url : nil }

    /// Runs `alcedo` with `arguments` to its end.
    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, stdout: String, stderr: String) {
        guard let url else { throw TestFailure("the alcedo executable is not built next to the tests") }
        return try AlcedoBinary.run(arguments, executable: url, environment: environment)
    }
}
