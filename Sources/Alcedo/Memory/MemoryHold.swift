import Synchronization

/// The reservation one run of the pipeline holds from a ``MemoryBudget``: made before a decode,
/// replaced by the next decode of the same run (never two at once: a run that waited for a
/// second while holding the first could wait for itself), lowered when only the processed
/// image is left, and released when the run ends.
final class MemoryHold: Sendable {
    let budget: MemoryBudget
    private let current = Mutex<MemoryReservation?>(nil)

    init(budget: MemoryBudget) {
        self.budget = budget
    }

    /// Releases what is held, then reserves `estimate`'s total for `what`.
    func reserve(_ estimate: WorkingSetEstimate, for what: String) async throws(AlcedoError) {
        release()
        let reservation = try await budget.reserve(estimate.total, for: what)
        let previous = current.withLock { held -> MemoryReservation? in
            defer { held = reservation }
            return held
        }
        previous?.release()
    }

    /// Lowers the reservation to `bytes`.
    func shrink(to bytes: Int) {
        current.withLock { $0 }?.shrink(to: bytes)
    }

    /// Releases what is held.
    func release() {
        current.withLock { held -> MemoryReservation? in
            defer { held = nil }
            return held
        }?.release()
    }
}
