import Synchronization

/// Hands progressive previews to one `async` caller's handler until ``close()``, which waits
/// for a call under way: once it returns, the handler is never called again.
final class PreviewDelivery: Sendable {
    private struct State {
        var closed = false
        var delivering = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let handler: @Sendable (AlcedoImage) -> Void
    private let state = Mutex(State())

    init(_ handler: @escaping @Sendable (AlcedoImage) -> Void) {
        self.handler = handler
    }

    /// Calls the handler with `image`, unless closed.
    @Sendable func deliver(_ image: AlcedoImage) {
        let open = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.delivering += 1
            return true
        }
        guard open else { return }
        handler(image)
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.delivering -= 1
            guard state.delivering == 0 else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Stops delivering and waits until no call of the handler is under way.
    func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state -> Bool in
                state.closed = true
                guard state.delivering > 0 else { return true }
                state.waiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }
}
