import Synchronization

/// Waits for the value a callback-style function hands its handler (Kingfisher's callback
/// forms): `start` gets the handler; the first call counts, later ones are ignored.
func firstCallbackValue<Value: Sendable>(_ start: (@escaping @Sendable (Value) -> Void) -> Void) async -> Value {
    await withCheckedContinuation { (continuation: CheckedContinuation<Value, Never>) in
        let resumed = Mutex(false)
        start { value in
            let first = resumed.withLock { done in
                defer { done = true }
                return !done
            }
            if first { continuation.resume(returning: value) }
        }
    }
}

/// ``firstCallbackValue(_:)`` that does not outlive the calling task: when the task is
/// cancelled before the handler is called, the wait ends with `cancelledValue` (a later call
/// of the handler is ignored).
func firstCallbackValue<Value: Sendable>(cancelledValue: Value,
                                         _ start: (@escaping @Sendable (Value) -> Void) -> Void) async -> Value {
    let gate = CallbackGate<Value>()
    return await withTaskCancellationHandler {
        await withCheckedContinuation { (continuation: CheckedContinuation<Value, Never>) in
            gate.install(continuation)
            start { value in gate.resolve(value) }
        }
    } onCancel: {
        gate.resolve(cancelledValue)
    }
}

/// The first value wins; it is handed to the continuation whether that is installed before or after.
private final class CallbackGate<Value: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Value, Never>?
        var value: Value?
        var resumed = false
    }

    private let state = Mutex(State())

    func install(_ continuation: CheckedContinuation<Value, Never>) {
        let ready: Value? = state.withLock { state in
            guard let value = state.value, !state.resumed else {
                state.continuation = continuation
                return nil
            }
            state.resumed = true
            return value
        }
        if let ready { continuation.resume(returning: ready) }
    }

    func resolve(_ value: Value) {
        let waiting: CheckedContinuation<Value, Never>? = state.withLock { state in
            guard state.value == nil else { return nil }
            state.value = value
            guard let continuation = state.continuation else { return nil }
            state.resumed = true
            state.continuation = nil
            return continuation
        }
        waiting?.resume(returning: value)
    }
}
