import Dispatch

/// Where ``ImageCache`` runs disk I/O (and the encoding and decoding around it): a dispatch
/// queue of its own, bridged to `async` with a continuation, so that blocking file calls never
/// occupy a thread of the cooperative pool.
struct CacheIOQueue: Sendable {
    let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label, qos: .userInitiated, attributes: .concurrent)
    }

    /// Runs `body` on the queue and returns its result.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws(AlcedoError) -> T) async throws(AlcedoError) -> T {
        let result: Result<T, AlcedoError> = await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: Result { () throws(AlcedoError) -> T in try body() })
            }
        }
        return try result.get()
    }
}
