import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the callback forms of the manager, the prefetcher and the binding call you back.
///
/// There is no main run loop on a server (`DispatchQueue.main` runs only under
/// `dispatchMain()`), so the default is ``untouch``: the callback runs on the thread that
/// finished the work, with no hop. Pass a queue of your own (``dispatch(_:)``, a serial one to
/// have callbacks never overlap) or ``mainAsync`` in an app that runs the main queue.
public enum CallbackQueue: Sendable {
    /// Call on whatever thread finished the work. The default.
    case untouch
    /// Call asynchronously on this queue.
    case dispatch(DispatchQueue)
    /// Call asynchronously on `DispatchQueue.main` (only in processes that run the main queue).
    case mainAsync
    /// Call at once when already on the main thread, else asynchronously on
    /// `DispatchQueue.main` (only in processes that run the main queue). Kingfisher's default.
    case mainCurrentOrAsync

    /// Runs `block` as the case says.
    public func execute(_ block: @escaping @Sendable () -> Void) {
        switch self {
        case .untouch: block()
        case .dispatch(let queue): queue.async(execute: block)
        case .mainAsync: DispatchQueue.main.async(execute: block)
        case .mainCurrentOrAsync:
            if Self.isMainThread { block() } else { DispatchQueue.main.async(execute: block) }
        }
    }

    /// The dispatch queue this callback queue stands for (Kingfisher's `queue`): the queue of
    /// ``dispatch(_:)``, else `DispatchQueue.main`. (Kingfisher gives the current
    /// `OperationQueue`'s queue for ``untouch``; Alcedo does not use `OperationQueue`, which is
    /// in full Foundation on Linux.)
    public var queue: DispatchQueue {
        switch self {
        case .mainAsync, .mainCurrentOrAsync, .untouch: return .main
        case .dispatch(let queue): return queue
        }
    }

    /// Whether the calling thread is the process's main thread.
    static var isMainThread: Bool {
        #if canImport(Darwin)
        return pthread_main_np() != 0
        #else
        // Linux: `/proc/thread-self` links to `<pid>/task/<tid>`, and the main thread's id is the
        // process id. Without `/proc`, no thread is taken for the main one.
        var buffer = [CChar](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBufferPointer { pointer -> Int in
            guard let base = pointer.baseAddress else { return -1 }
            return readlink("/proc/thread-self", base, pointer.count - 1)
        }
        guard count > 0 else { return false }
        let target = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let parts = target.split(separator: "/")
        return parts.count == 3 && parts[1] == "task" && parts[0] == parts[2]
        #endif
    }
}
