@testable import Alcedo
import Foundation
import Testing

/// Reads fake roots built in a temporary folder: `proc/self/cgroup` and the files under
/// `sys/fs/cgroup` as the kernel shows them.
@Suite("ControlGroupMemoryLimit: the process's own cgroup, v1 and v2")
struct ControlGroupMemoryLimitTests {
    /// A fake root with `files` (path relative to the root: contents); removed by `body`'s end.
    func withRoot<T>(_ files: [String: String], _ body: (URL) throws -> T) throws -> T {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-cgroup-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        for (path, contents) in files {
            let file = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(contents.utf8).write(to: file)
        }
        return try body(root)
    }

    @Test func aSystemdServiceGetsItsMemoryMax() throws {
        let limit = try withRoot([
            "proc/self/cgroup": "0::/system.slice/alcedo.service\n",
            "sys/fs/cgroup/system.slice/alcedo.service/memory.max": "536870912\n",
            "sys/fs/cgroup/system.slice/memory.max": "max\n",
        ]) { ControlGroupMemoryLimit.read(root: $0) }
        #expect(limit == 512 << 20)
    }

    @Test func aTighterLimitOnAParentSliceWins() throws {
        let limit = try withRoot([
            "proc/self/cgroup": "0::/user.slice/user-1000.slice/session-3.scope\n",
            "sys/fs/cgroup/user.slice/user-1000.slice/session-3.scope/memory.max": "max\n",
            "sys/fs/cgroup/user.slice/user-1000.slice/memory.max": "1073741824\n",
            "sys/fs/cgroup/user.slice/memory.max": "268435456\n",
        ]) { ControlGroupMemoryLimit.read(root: $0) }
        #expect(limit == 256 << 20)
    }

    @Test func aContainerThatSeesItsGroupAsTheRootReadsTheRootFile() throws {
        // cgroup namespace: "0::/" and the limit at the mount's root.
        let limit = try withRoot([
            "proc/self/cgroup": "0::/\n",
            "sys/fs/cgroup/memory.max": "402653184\n",
        ]) { ControlGroupMemoryLimit.read(root: $0) }
        #expect(limit == 384 << 20)
        // A host path that the container's mount does not have: the walk reaches the root.
        let unmounted = try withRoot([
            "proc/self/cgroup": "0::/kubepods/pod1234/abcdef\n",
            "sys/fs/cgroup/memory.max": "402653184\n",
        ]) { ControlGroupMemoryLimit.read(root: $0) }
        #expect(unmounted == 384 << 20)
    }

    @Test func noLimitAnywhereIsNil() throws {
        let limit = try withRoot([
            "proc/self/cgroup": "0::/system.slice/alcedo.service\n",
            "sys/fs/cgroup/system.slice/alcedo.service/memory.max": "max\n",
        ]) { ControlGroupMemoryLimit.read(root: $0) }
        #expect(limit == nil)
        #expect(try withRoot([:]) { ControlGroupMemoryLimit.read(root: $0) } == nil)
    }

    @Test func cgroupV1ReadsTheMemoryControllersLimitInBytes() throws {
        let limit = try withRoot([
            "proc/self/cgroup": "12:pids:/system.slice/alcedo.service\n5:cpu,cpuacct:/system.slice/alcedo.service\n"
                + "4:memory:/system.slice/alcedo.service\n0::/system.slice/alcedo.service\n",
            "sys/fs/cgroup/memory/system.slice/alcedo.service/memory.limit_in_bytes": "805306368\n",
            // v1's "no limit": Int64.max rounded down to the page size.
            "sys/fs/cgroup/memory/system.slice/memory.limit_in_bytes": "9223372036854771712\n",
            "sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n",
        ]) { ControlGroupMemoryLimit.read(root: $0) }
        #expect(limit == 768 << 20)
    }

    @Test func withoutAMembershipFileTheRootFilesAreRead() throws {
        let limit = try withRoot([
            "sys/fs/cgroup/memory.max": "134217728\n",
        ]) { ControlGroupMemoryLimit.read(root: $0) }
        #expect(limit == 128 << 20)
    }

    @Test func thisMachinesLimitReadsWithoutFailing() {
        // Whatever the machine has: a positive limit or none.
        if let limit = ProcessMemory.controlGroupLimit { #expect(limit > 0) }
    }
}
