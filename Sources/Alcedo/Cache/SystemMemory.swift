#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How much memory this process may use, as the system says.
enum SystemMemory {
    /// The physical memory, lowered to the control group's memory limit when one is set (a
    /// container with `--memory`, a systemd unit with `MemoryMax=`): on Linux, the limit in
    /// `/sys/fs/cgroup/memory.max` (cgroup v2) or `memory/memory.limit_in_bytes` (v1).
    static let available: UInt64 = {
        var total = ProcessInfo.processInfo.physicalMemory
        #if os(Linux)
        for path in ["/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"] {
            if let limit = ControlGroupMemoryLimit.value(at: URL(fileURLWithPath: path)) { total = min(total, UInt64(limit)) }
        }
        #endif
        return total
    }()
}
