import CAlcedoCodecs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's memory as the system sees it, and the allocator's means to give memory back.
public enum ProcessMemory {
    /// The resident set size now, in bytes (`/proc/self/statm` on Linux; `nil` elsewhere or
    /// when it does not read).
    public static func residentBytes() -> Int? {
        #if os(Linux)
        guard let bytes = POSIXFile.readSmallFile("/proc/self/statm", limit: 128), !bytes.isEmpty else { return nil }
        let fields = String(decoding: bytes, as: UTF8.self).split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
        #else
        return nil
        #endif
    }

    /// The memory limit of the process's own control group, the tightest of its group and the
    /// groups above it (cgroup v2's `memory.max`, v1's `memory.limit_in_bytes`; see
    /// ``ControlGroupMemoryLimit``), or `nil` when there is none: a systemd service's
    /// `MemoryMax=` as well as a container's limit.
    public static var controlGroupLimit: Int? {
        #if os(Linux)
        return ControlGroupMemoryLimit.read()
        #else
        return nil
        #endif
    }

    /// Returns the free memory at the top of the allocator's heaps and in its free pages to
    /// the system (glibc's `malloc_trim(0)`); `true` when some was returned. Costs a walk of
    /// the free lists: call it after a burst or when idle, not per request.
    @discardableResult
    public static func trim() -> Bool {
        alcedo_malloc_trim() != 0
    }

    /// Asks the system to send this process `signal` when its parent process ends (Linux's
    /// `PR_SET_PDEATHSIG`): a worker of a supervisor does not outlive it. `false` off Linux.
    @discardableResult
    package static func setParentDeathSignal(_ signal: Int32) -> Bool {
        alcedo_set_parent_death_signal(signal) != 0
    }

    /// Bounds glibc's malloc arenas to `count` (`mallopt(M_ARENA_MAX, count)`): each thread that
    /// allocates under contention otherwise gets an arena of its own (up to 8 per core), each
    /// keeping freed memory apart. Call it once, early, before the threads start; `true` when
    /// the allocator took it.
    @discardableResult
    public static func limitArenas(to count: Int) -> Bool {
        alcedo_malloc_limit_arenas(Int32(max(1, count))) != 0
    }

    /// Gives every allocation of at least `bytes` pages of its own, returned to the system the
    /// moment it is freed (`mallopt(M_MMAP_THRESHOLD, bytes)`). glibc starts at 128 KiB but
    /// raises the threshold to the size of each large block freed (up to 32 MiB), so that
    /// pixel buffers and encoded results end up inside its heaps, where what a burst frees stays
    /// resident or fragments them. A fixed threshold keeps them out. `true` when the allocator
    /// took it.
    @discardableResult
    public static func setLargeAllocationThreshold(_ bytes: Int) -> Bool {
        alcedo_malloc_mmap_threshold(max(0, bytes)) != 0
    }

    /// Lets `free` keep up to `bytes` of free memory at the top of each of the allocator's heaps
    /// instead of giving it back at once (`mallopt(M_TRIM_THRESHOLD, bytes)`; glibc's default is
    /// 128 KiB, raised with its mmap threshold unless that is fixed). Memory given back is
    /// faulted in and zeroed again by the next allocation that needs it: buffers of a few MiB
    /// freed and allocated on every request would cost their pages' faults each time. ``trim()``
    /// still gives back everything free. `true` when the allocator took it.
    @discardableResult
    public static func setTrimThreshold(_ bytes: Int) -> Bool {
        alcedo_malloc_trim_threshold(max(0, bytes)) != 0
    }

    /// Bytes the allocator has handed out and not had back (glibc's `mallinfo2().uordblks`
    /// plus its mmapped chunks), or `nil` where there is no such count.
    public static func allocatedBytes() -> Int? {
        usage()?.inUse
    }

    /// Bytes the allocator keeps free in its heaps (glibc's `mallinfo2().fordblks`): memory the
    /// process holds but does not use, what ``trim()`` may give back.
    public static func freeHeapBytes() -> Int? {
        usage()?.free
    }

    private static func usage() -> (inUse: Int, free: Int)? {
        var inUse = 0, free = 0
        guard alcedo_malloc_usage(&inUse, &free) != 0 else { return nil }
        return (inUse, free)
    }
}
