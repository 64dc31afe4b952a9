#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Starts `body` on a detached POSIX thread of its own with a stack of `stackSize` bytes
/// (Foundation's `Thread` without full Foundation). Returns `false` when the system refuses
/// a thread; `body` then does not run.
package func startDetachedThread(stackSize: Int, _ body: @escaping @Sendable () -> Void) -> Bool {
    final class Box: @unchecked Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    var attributes = pthread_attr_t()
    guard pthread_attr_init(&attributes) == 0 else { return false }
    defer { pthread_attr_destroy(&attributes) }
    _ = pthread_attr_setstacksize(&attributes, stackSize)
    _ = pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    #if canImport(Darwin)
    var thread: pthread_t? = nil
    #else
    var thread = pthread_t()
    #endif
    let started = pthread_create(&thread, &attributes, { argument in
        #if canImport(Darwin)
        let box = Unmanaged<Box>.fromOpaque(argument).takeRetainedValue()
        #else
        let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
        #endif
        box.body()
        return nil
    }, box)
    if started != 0 { Unmanaged<Box>.fromOpaque(box).release() }
    return started == 0
}
