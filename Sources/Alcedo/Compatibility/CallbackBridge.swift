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
