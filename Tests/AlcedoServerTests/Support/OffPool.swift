import Foundation

/// Runs blocking socket or process work on a thread of its own, never on one of the
/// cooperative pool's few threads: the servers these tests talk to in this process need
/// those threads to accept and answer, so a test that blocked them while waiting for its own
/// server would wait for itself.
func offPool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: body()) }
    }
}

/// ``offPool(_:)`` for throwing work.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}
