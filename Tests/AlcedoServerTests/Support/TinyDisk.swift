import AlcedoTestSupport
import Foundation

/// A real small file system for a test: a tmpfs of a few megabytes mounted on a fresh
/// temporary folder (needs root, or CAP_SYS_ADMIN in the test's mount namespace).
final class TinyDisk: Sendable {
    let folder: URL

    private init(folder: URL) { self.folder = folder }

    /// Mounts a tmpfs of `megabytes`; `nil` when mounting is not permitted here.
    static func mount(megabytes: Int) -> TinyDisk? {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-tiny-disk-\(UUID().uuidString)")
        guard (try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)) != nil else { return nil }
        guard run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", folder.path]) else {
            try? FileManager.default.removeItem(at: folder)
            return nil
        }
        return TinyDisk(folder: folder)
    }

    /// Whether a tmpfs can be mounted here (tried once, on a probe).
    static let canMount: Bool = {
        guard let probe = mount(megabytes: 1) else { return false }
        probe.unmount()
        return true
    }()

    /// Writes a file of zeros until the disk is full; returns it.
    func fill() -> URL {
        let filler = folder.appendingPathComponent("filler")
        _ = FileManager.default.createFile(atPath: filler.path, contents: nil)
        guard let handle = try? FileHandle(forWritingTo: filler) else { return filler }
        defer { try? handle.close() }
        let chunk = Data(repeating: 0, count: 64 << 10)
        while (try? handle.write(contentsOf: chunk)) != nil {}
        // The last pages, smaller than a chunk.
        let page = Data(repeating: 0, count: 4096)
        while (try? handle.write(contentsOf: page)) != nil {}
        return filler
    }

    /// Unmounts the file system and removes the folder.
    func unmount() {
        _ = Self.run("/bin/umount", ["-l", folder.path])
        try? FileManager.default.removeItem(at: folder)
    }

    private static func run(_ tool: String, _ arguments: [String]) -> Bool {
        guard FileManager.default.isExecutableFile(atPath: tool) else { return false }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? ProcessLaunch.run(process)) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}
