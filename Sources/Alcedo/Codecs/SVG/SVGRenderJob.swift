import CRSVG
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// One librsvg render on a thread of its own, watched by the decoding thread against the
/// decode's CPU-time budget.
///
/// librsvg and cairo cannot be interrupted while they draw, and a small document can ask for
/// hours of drawing (thousands of full-canvas blurs, `feTurbulence` with a huge `numOctaves`,
/// `<use>` fan-outs). So the render runs on a dedicated thread while the caller polls that
/// thread's CPU clock (and the process's CPU time spread over the cores, which counts the
/// worker threads librsvg runs its filters on): past the budget the caller gets ``DecodingErrorReason/timedOut(format:limit:)``
/// at once, and the thread is abandoned: it keeps its own reference to the document and its
/// canvas, finishes, and frees them. At most ``maximumAbandoned`` abandoned renders may run at
/// a time (one per core): while that many run, a new render waits for one to end, for at most
/// the budget's length, and is refused after that, so hostile documents cannot pile up CPU or
/// memory (each holds at most one canvas within the pixel limit, its filter surfaces and the
/// parsed document). The decode returns at once, so its caller gives back its processing place
/// and reservation; what the abandoned render still holds (canvas and estimated filter surfaces)
/// is counted in the caller's ``MemoryBudget``, when it names one, until the render ends.
final class SVGRenderJob: Sendable {
    /// Renders past their deadline that are still drawing, process-wide.
    private static let abandoned = Mutex(0)

    /// How many abandoned renders may run at once: the number of cores.
    static let maximumAbandoned = max(1, ProcessInfo.processInfo.activeProcessorCount)

    /// The number of abandoned renders still drawing.
    static var abandonedCount: Int { abandoned.withLock { $0 } }

    private struct State {
        /// The render thread's CPU clock, read by the thread itself (its `pthread_t` is not
        /// valid once the thread ends, which a short render does before the caller looks).
        var clock: clockid_t?
        var result: Result<[UInt8], AlcedoError>?
        var isAbandoned = false
        /// Gives back what an abandoned render holds in a ``MemoryBudget``.
        var release: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())
    private let finished = DispatchSemaphore(value: 0)
    private let started = DispatchSemaphore(value: 0)

    private init() {}

    /// Renders `document` into a `size` canvas on a new thread and waits for it while the
    /// render's CPU time stays within `deadline`'s remaining budget.
    /// - Throws: `.timedOut` past the budget (the render is abandoned), `.unsupportedFeature`
    ///   when ``maximumAbandoned`` abandoned renders were still running for the budget's length,
    ///   or the render's error.
    /// - Parameter abandonedHold: the budget and bytes to count as held (under
    ///   ``MemoryBudget/abandonedRendersName``) from the moment the render is abandoned until it
    ///   ends; `nil`: counted nowhere.
    static func render(_ document: SVGDocument, size: PixelSize, deadline: DecodingDeadline,
                       abandonedHold: (budget: MemoryBudget, bytes: Int)? = nil) throws(AlcedoError) -> [UInt8] {
        // Wait (idle) for an abandoned render to end, at most the budget's length in wall time.
        let waitStart = ContinuousClock.now
        while abandonedCount >= maximumAbandoned {
            guard ContinuousClock.now - waitStart < deadline.limit else {
                throw .decodingError(reason: .unsupportedFeature(
                    format: .svg, message: "\(abandonedCount) earlier SVG renders that ran past their time limit are still drawing; try again later"))
            }
            usleep(20_000)
        }
        let job = SVGRenderJob()
        let lib = document.lib
        // The thread owns a reference of its own: an abandoned render outlives the caller's.
        // (Passed as its address: the pointer is used by that thread alone from here on.)
        let handle = UInt(bitPattern: lib.g_object_ref(UnsafeMutableRawPointer(document.handle)))
        let body: @Sendable () -> Void = {
            var clock = clockid_t()
            let hasClock = pthread_getcpuclockid(pthread_self(), &clock) == 0
            job.state.withLock { $0.clock = hasClock ? clock : nil }
            job.started.signal()
            let pointer = UnsafeMutableRawPointer(bitPattern: handle)!
            let owned = SVGDocument(lib: lib, handle: OpaquePointer(pointer))
            let result: Result<[UInt8], AlcedoError>
            do throws(AlcedoError) { result = .success(try owned.render(size: size)) } catch { result = .failure(error) }
            lib.g_object_unref(pointer)
            let (wasAbandoned, release) = job.state.withLock { state in
                state.result = result
                return (state.isAbandoned, state.release)
            }
            if wasAbandoned {
                // Drop the canvas before saying the memory is free.
                job.state.withLock { $0.result = nil }
                release?()
                abandoned.withLock { $0 -= 1 }
            }
            job.finished.signal()
        }
        guard startDetachedThread(stackSize: 8 << 20, body) else {
            lib.g_object_unref(UnsafeMutableRawPointer(bitPattern: handle)!)
            throw .decodingError(reason: .unsupportedFeature(format: .svg, message: "the system refused a render thread"))
        }
        job.started.wait()
        let limit = deadline.limit - deadline.elapsed
        let threadClock = job.state.withLock { $0.clock }
        let processStart = Self.cpuTime(CLOCK_PROCESS_CPUTIME_ID)
        let cores = Double(max(1, ProcessInfo.processInfo.activeProcessorCount))
        while true {
            if job.finished.wait(timeout: .now() + .milliseconds(10)) == .success { break }
            // The render thread's CPU time; and, for librsvg's filters that run on its own worker
            // threads, the process's CPU time since the start spread over the cores (never more
            // than the wall time: other work in the process cannot make it run out early).
            let thread = threadClock.map(Self.cpuTime) ?? .zero
            let spread = (Self.cpuTime(CLOCK_PROCESS_CPUTIME_ID) - processStart) / cores
            if max(thread, spread) > limit {
                let gaveUp = job.state.withLock { state -> Bool in
                    guard state.result == nil else { return false }
                    state.isAbandoned = true
                    state.release = abandonedHold.map { $0.budget.holdAbandoned($0.bytes) }
                    return true
                }
                guard gaveUp else { continue }  // it finished meanwhile: take the result
                abandoned.withLock { $0 += 1 }
                throw .decodingError(reason: .timedOut(format: .svg, limit: deadline.limit))
            }
        }
        let result = job.state.withLock { state in
            defer { state.result = nil }
            return state.result!
        }
        return try result.get()
    }

    private static func cpuTime(_ clock: clockid_t) -> Duration {
        var now = timespec()
        // A thread's clock fails once the thread has ended: nothing more to count.
        guard clock_gettime(clock, &now) == 0 else { return .zero }
        return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
    }
}
