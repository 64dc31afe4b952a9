import Dispatch
import Foundation

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

    /// The dispatch queue this callback queue stands for (Kingfisher's `queue`):
    /// `DispatchQueue.main` for ``mainAsync`` and ``mainCurrentOrAsync``, the queue of
    /// ``dispatch(_:)``, and for ``untouch`` the current operation queue's dispatch queue, or
    /// `DispatchQueue.main` when there is none.
    public var queue: DispatchQueue {
        switch self {
        case .mainAsync, .mainCurrentOrAsync: return .main
        case .untouch: return OperationQueue.current?.underlyingQueue ?? .main
        case .dispatch(let queue): return queue
        }
    }

    /// Whether the calling thread is the process's main thread.
    static var isMainThread: Bool { Thread.isMainThread }
}
