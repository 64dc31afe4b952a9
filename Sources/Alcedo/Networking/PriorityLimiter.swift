import Synchronization

/// A request's place in a ``PriorityLimiter`` queue. Its priority may rise while it waits:
/// explicitly, or through linked tickets (the callers that joined a coalesced request), whose
/// highest priority it takes.
final class PriorityTicket: Sendable {
    private struct State {
        var own: DownloadPriority
        var links: [PriorityTicket] = []
    }

    private let state: Mutex<State>

    init(priority: DownloadPriority) {
        state = Mutex(State(own: priority))
    }

    /// The highest of the ticket's own priority and those of its links.
    var priority: DownloadPriority {
        let (own, links) = state.withLock { ($0.own, $0.links) }
        return links.reduce(own) { max($0, $1.priority) }
    }

    /// Makes the ticket at least as urgent as `other`, now and when `other` rises later.
    func link(_ other: PriorityTicket) {
        guard other !== self else { return }
        state.withLock { $0.links.append(other) }
    }
}

/// Lets at most `limit` holders per key (a host, say) run at once; the others wait in a
/// queue served by priority, then arrival. Waiting costs no thread; a cancelled waiter leaves
/// the queue at once.
final class PriorityLimiter: Sendable {
    private struct Waiter {
        let id: UInt64
        let ticket: PriorityTicket
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct Slot {
        var running = 0
        var waiting: [Waiter] = []
    }

    private struct State {
        var limit: Int
        var slots: [String: Slot] = [:]
        var nextID: UInt64 = 0
    }

    /// The most holders per key.
    var limit: Int { state.withLock { $0.limit } }
    private let state: Mutex<State>

    init(limit: Int) {
        state = Mutex(State(limit: max(1, limit)))
    }

    /// Changes the most holders per key (at least 1). Holders already running keep running; a
    /// higher limit lets waiters in at once, a lower one lets no more in until enough have left.
    func setLimit(_ newLimit: Int) {
        let admitted: [Waiter] = state.withLock { state in
            state.limit = max(1, newLimit)
            var admitted: [Waiter] = []
            for key in Array(state.slots.keys) {
                guard var slot = state.slots[key] else { continue }
                while slot.running < state.limit, let index = Self.nextWaiter(in: slot) {
                    admitted.append(slot.waiting.remove(at: index))
                    slot.running += 1
                }
                state.slots[key] = slot
            }
            return admitted
        }
        for waiter in admitted { waiter.continuation.resume() }
    }

    /// The waiter to serve first: the highest priority, the earliest among equals.
    private static func nextWaiter(in slot: Slot) -> Int? {
        var chosen: Int?
        for index in slot.waiting.indices {
            if let best = chosen, slot.waiting[index].ticket.priority <= slot.waiting[best].ticket.priority { continue }
            chosen = index
        }
        return chosen
    }

    /// Waits for a free place under `key`; throws `CancellationError` if the task is cancelled
    /// first. Every successful acquire must be balanced by ``release(_:)``.
    func acquire(_ key: String, ticket: PriorityTicket) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    // Checked under the lock: a cancellation handler that ran before this point
                    // found nothing to remove, so the flag must be honoured here.
                    if Task.isCancelled { return .failure(CancellationError()) }
                    var slot = state.slots[key, default: Slot()]
                    defer { state.slots[key] = slot }
                    if slot.running < state.limit {
                        slot.running += 1
                        return .success(())
                    }
                    slot.waiting.append(Waiter(id: id, ticket: ticket, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let removed: Waiter? = state.withLock { state in
                guard let index = state.slots[key]?.waiting.firstIndex(where: { $0.id == id }) else { return nil }
                return state.slots[key]?.waiting.remove(at: index)
            }
            removed?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Frees a place under `key`, handing it to the waiter with the highest priority
    /// (the earliest among equals).
    func release(_ key: String) {
        let next: Waiter? = state.withLock { state in
            guard var slot = state.slots[key] else { return nil }
            // Over a lowered limit, a leaving holder hands its place to no one.
            let chosen = slot.running > state.limit ? nil : Self.nextWaiter(in: slot)
            var waiter: Waiter?
            if let chosen {
                waiter = slot.waiting.remove(at: chosen)
            } else {
                slot.running -= 1
            }
            state.slots[key] = slot.running == 0 && slot.waiting.isEmpty ? nil : slot
            return waiter
        }
        next?.continuation.resume()
    }

    /// Holders running and waiting under `key`.
    func load(_ key: String) -> (running: Int, waiting: Int) {
        state.withLock { ($0.slots[key]?.running ?? 0, $0.slots[key]?.waiting.count ?? 0) }
    }
}
