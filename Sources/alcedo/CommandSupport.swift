import Alcedo
import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Output helpers shared by the subcommands: one line per failure on stderr, JSON lines on stdout.
enum Console {
    /// Writes `message` and a newline to standard error.
    static func error(_ message: String) {
        Console.write(message + "\n", to: STDERR_FILENO)
    }

    /// Writes one line to standard output and flushes it, so piped output streams.
    static func line(_ text: String) {
        Console.write(text + "\n", to: STDOUT_FILENO)
    }

    /// Writes all of `text` to the descriptor `fd` (standard output or error), as it is.
    static func write(_ text: String, to fd: Int32) {
        let bytes = Array(text.utf8)
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) }
            if n > 0 {
                done += n
            } else if n < 0, errno == EINTR {
                continue
            } else {
                return
            }
        }
    }

    /// Everything standard input holds, read to its end.
    static func readStandardInput() -> Data {
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(STDIN_FILENO, $0.baseAddress!, $0.count) }
            if n > 0 {
                data.append(contentsOf: chunk[..<n])
            } else if n < 0, errno == EINTR {
                continue
            } else {
                return data
            }
        }
    }

    /// One compact JSON object on one line.
    static func jsonLine(_ object: [String: Any]) {
        line(jsonText(object))
    }

    /// `object` as compact JSON with sorted keys (``JSONNull`` values are written as `null`).
    static func jsonText(_ object: [String: Any]) -> String {
        JSONText.string(object)
    }
}

/// Reads a whole regular file, turning failures into the system's one-line reason.
func readFile(_ path: String) throws(CLIFailure) -> Data {
    try checkRegularFile(path)
    do {
        return try Data(contentsOf: URL(fileURLWithPath: path), options: .mappedIfSafe)
    } catch {
        let reason = access(path, R_OK) != 0 ? String(cString: strerror(errno)) : "\(error)"
        throw CLIFailure(path: path, reason: "cannot read: \(reason)")
    }
}

/// Throws the reason `path` cannot be read as an image file: missing, unreadable, a folder or
/// not a regular file.
func checkRegularFile(_ path: String) throws(CLIFailure) {
    switch FileKind(path: path) {
    case .regular: return
    case .unreadable(let code): throw CLIFailure(path: path, reason: "cannot read: \(String(cString: strerror(code)))")
    case .directory: throw CLIFailure(path: path, reason: "cannot read: is a folder")
    case .other: throw CLIFailure(path: path, reason: "cannot read: is not a regular file")
    }
}

/// A regular file open for reading, closed when the value goes away.
final class InputFile {
    let path: String
    let fd: Int32

    /// Opens `path` without blocking (a FIFO put in its place after a check by path would
    /// otherwise hang the open) and requires the descriptor itself to be a regular file.
    init(path: String) throws(CLIFailure) {
        self.path = path
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw CLIFailure(path: path, reason: "cannot read: \(String(cString: strerror(errno)))") }
        let kind = FileKind(descriptor: fd)
        guard kind == .regular else {
            let what = kind == .directory ? "is a folder" : "is not a regular file"
            close(fd)
            throw CLIFailure(path: path, reason: "cannot read: \(what)")
        }
    }

    /// The format the first bytes of the file show (``ImageFormat/unknown`` when unreadable).
    func sniff() -> ImageFormat {
        var head = [UInt8](repeating: 0, count: 64)
        let count = head.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        return count > 0 ? head.withUnsafeBytes { ImageFormat.sniff(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) } : .unknown
    }

    /// Moves back to the start, for a second pass.
    func rewind() throws(CLIFailure) {
        guard lseek(fd, 0, SEEK_SET) == 0 else { throw CLIFailure(path: path, reason: "cannot read: \(String(cString: strerror(errno)))") }
    }

    deinit { close(fd) }
}

/// Writes `data` atomically: a temporary file in the same folder, then a rename, so a reader
/// never sees a half-written file. Failures carry the system's reason (`No such file or directory`…).
func writeFile(_ data: Data, to path: String) throws(CLIFailure) {
    try writeFile([data], to: path)
}

/// Writes `parts` one after the other into one file, atomically (see ``writeFile(_:to:)``),
/// straight from their own storage: nothing is joined into a second buffer first.
func writeFile(_ parts: [any ContiguousBytes], to path: String) throws(CLIFailure) {
    let file = try AtomicFileWriter(path: path)
    for part in parts {
        part.withUnsafeBytes { file.write($0) }
    }
    try file.commit()
}

/// A file written piece by piece and put in place only when complete: the pieces go to a
/// temporary file in the same folder, renamed over `path` by ``commit()``. Dropped without a
/// commit (or after a write failed), the temporary file is removed and `path` is untouched.
final class AtomicFileWriter {
    let path: String
    private let temporary: String
    private var fd: Int32
    private var failure: Int32 = 0

    init(path: String) throws(CLIFailure) {
        self.path = path
        let url = URL(fileURLWithPath: path)
        temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp").path
        fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw CLIFailure(path: path, reason: "cannot write: \(String(cString: strerror(errno)))") }
    }

    /// Appends `bytes`; after a failure, nothing more is written and ``commit()`` reports it.
    func write(_ bytes: UnsafeRawBufferPointer) {
        guard failure == 0, fd >= 0, let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(fd, base + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                failure = errno
                return
            }
            offset += written
        }
    }

    /// Closes the file and renames it to ``path``.
    func commit() throws(CLIFailure) {
        if close(fd) != 0 && failure == 0 { failure = errno }
        fd = -1
        if failure == 0 && rename(temporary, path) != 0 { failure = errno }
        if failure != 0 {
            unlink(temporary)
            throw CLIFailure(path: path, reason: "cannot write: \(String(cString: strerror(failure)))")
        }
    }

    deinit {
        if fd >= 0 {
            close(fd)
            unlink(temporary)
        }
    }
}

/// A failure of one file: printed as `alcedo: PATH: REASON`.
struct CLIFailure: Error {
    let path: String
    let reason: String

    init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    init(path: String, error: AlcedoError) {
        self.init(path: path, reason: error.description)
    }

    func report() { Console.error("alcedo: \(path): \(reason)") }
}
