import Alcedo

/// Gives freed memory back to the system (``ProcessMemory/trim()``): once after each burst of
/// work, when no request has been at work for a second, every ``busyInterval`` while busy
/// when the allocator keeps more than ``busyThreshold`` free, and every second while the
/// resident size is over 15/16 of the budget. Without it, glibc keeps what a
/// burst freed in its heaps, and the resident size stays at the burst's peak.
struct MemoryReturner: Sendable {
    let budget: MemoryBudget
    /// How often the budget is looked at (default 1 s).
    var tick: Duration = .seconds(1)
    /// How often a busy server trims (default 2 s).
    var busyInterval: Duration = .seconds(2)
    /// The free heap bytes above which a busy server trims (default 24 MiB).
    var busyThreshold = 24 << 20

    /// Runs until the task is cancelled.
    func run() async {
        var trimmedAfter = budget.snapshot.grantedTotal
        var lastTrim = ContinuousClock.now
        while !Task.isCancelled {
            do { try await Task.sleep(for: tick) } catch { return }
            let snapshot = budget.snapshot
            let idle = snapshot.running == 0 && snapshot.waiting == 0
            if idle, snapshot.grantedTotal != trimmedAfter {
                // A burst ended (or a request since the last trim): give back what it freed.
                trimmedAfter = snapshot.grantedTotal
                ProcessMemory.trim()
                lastTrim = .now
            } else if !idle, let resident = ProcessMemory.residentBytes(), resident > budget.capacity / 16 * 15 {
                lastTrim = .now
                ProcessMemory.trim()
            } else if !idle, ContinuousClock.now - lastTrim >= busyInterval {
                lastTrim = .now
                if (ProcessMemory.freeHeapBytes() ?? 0) > busyThreshold { ProcessMemory.trim() }
            }
        }
    }
}
