import Synchronization

/// At most `limit` requests at work at once and `queueLength` waiting; the next one is
/// refused at once (the server answers 429 with `Retry-After`).
final class AdmissionLimiter: Sendable {
    private struct State {
        var running = 0
        /// Queued requests, counted from admission to the queue until they leave it.
        var queued = 0
        var waiters: [(id: Int, continuation: CheckedContinuation<Bool, Never>)] = []
        var nextID = 0
    }

    let limit: Int
    let queueLength: Int
    private let state = Mutex(State())

    init(limit: Int, queueLength: Int) {
        self.limit = max(1, limit)
        self.queueLength = max(0, queueLength)
    }

    private enum Admission { case admitted, queued(Int), refused }

    /// Takes a place, waiting in the queue if needed; `false` when the queue is full or the
    /// task was cancelled while waiting. Call ``release()`` after a `true`.
    func acquire(onQueued: () -> Void = {}, onDequeued: () -> Void = {}) async -> Bool {
        let admission: Admission = state.withLock { state in
            if state.running < limit {
                state.running += 1
                return .admitted
            }
            guard state.queued < queueLength else { return .refused }
            state.queued += 1
            state.nextID += 1
            return .queued(state.nextID)
        }
        switch admission {
        case .admitted: return true
        case .refused: return false
        case .queued(let id):
            onQueued()
            defer { onDequeued() }
            return await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let immediate: Bool? = state.withLock { state in
                        if Task.isCancelled {
                            state.queued -= 1
                            return false
                        }
                        if state.running < limit {
                            state.running += 1
                            state.queued -= 1
                            return true
                        }
                        state.waiters.append((id, continuation))
                        return nil
                    }
                    if let immediate { continuation.resume(returning: immediate) }
                }
            } onCancel: {
                let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    state.queued -= 1
                    return state.waiters.remove(at: index).continuation
                }
                waiter?.resume(returning: false)
            }
        }
    }

    /// Gives a place back, handing it to the first waiter.
    func release() {
        let next = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            if state.waiters.isEmpty {
                state.running -= 1
                return nil
            }
            state.queued -= 1
            return state.waiters.removeFirst().continuation
        }
        next?.resume(returning: true)
    }
}
