#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The memory limit the kernel enforces on this process through its control groups, read as a
/// container runtime or systemd (`MemoryMax=`) sets it.
///
/// The process's own group is named in `/proc/self/cgroup`:
/// - cgroup v2, the line `0::/system.slice/alcedo.service`: `memory.max` of that folder under
///   `/sys/fs/cgroup` and of every folder above it up to the mount's root, the tightest one
///   winning (a limit on a parent slice binds its children too); `max` means no limit there;
/// - cgroup v1, the line `N:memory:/path` (the memory controller, alone or with others):
///   `memory.limit_in_bytes` the same way under `/sys/fs/cgroup/memory` (a value near
///   `Int64.max` means no limit).
///
/// A folder named in `/proc/self/cgroup` that is not mounted (a container that sees its own
/// group as the mount's root) is skipped: the walk up still reads the root's file. When
/// `/proc/self/cgroup` does not read, the root files alone are read.
public enum ControlGroupMemoryLimit {
    /// The tightest limit in bytes, or `nil` when there is none.
    /// - Parameter root: the folder standing for `/` (default `/`; a test passes a folder
    ///   holding `proc/self/cgroup` and `sys/fs/cgroup/...`).
    public static func read(root: URL = URL(fileURLWithPath: "/")) -> Int? {
        let cgroupRoot = root.appendingPathComponent("sys/fs/cgroup")
        let membership = (try? String(contentsOf: root.appendingPathComponent("proc/self/cgroup"), encoding: .utf8)) ?? ""
        var limits: [Int] = []
        var sawV2 = false, sawV1 = false
        for line in membership.split(whereSeparator: \.isNewline) {
            // hierarchy-ID:controller-list:path (the path may itself hold colons).
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            let path = String(fields[2])
            if fields[0] == "0" && fields[1].isEmpty {
                sawV2 = true
                limits += walk(from: path, under: cgroupRoot, file: "memory.max")
            } else if fields[1].split(separator: ",").contains("memory") {
                sawV1 = true
                limits += walk(from: path, under: cgroupRoot.appendingPathComponent("memory"), file: "memory.limit_in_bytes")
            }
        }
        if !sawV2 && !sawV1 {
            limits += [value(at: cgroupRoot.appendingPathComponent("memory.max")),
                       value(at: cgroupRoot.appendingPathComponent("memory/memory.limit_in_bytes"))].compactMap { $0 }
        }
        return limits.min()
    }

    /// The limits in `file` of the folder `path` under `mount` and of each folder above it,
    /// the mount's root included.
    private static func walk(from path: String, under mount: URL, file: String) -> [Int] {
        var components = path.split(separator: "/").map(String.init).filter { $0 != "." && !$0.isEmpty }
        // A path that climbs out of the mount names nothing we can read.
        if components.contains("..") { components = [] }
        var limits: [Int] = []
        while true {
            let folder = components.reduce(mount) { $0.appendingPathComponent($1) }
            if let limit = value(at: folder.appendingPathComponent(file)) { limits.append(limit) }
            if components.isEmpty { break }
            components.removeLast()
        }
        return limits
    }

    /// A limit file's number: `nil` for `max`, a missing file or v1's "no limit" (a value near
    /// `Int64.max`, rounded down to the page size).
    static func value(at file: URL) -> Int? {
        guard let data = POSIXFile.readSmallFile(file.path, limit: 64) else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingWhitespace()
        guard let limit = Int(text), limit > 0, limit < 1 << 50 else { return nil }
        return limit
    }
}
