#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// A budget of working memory shared by the image work of a process: each job reserves its
/// estimated working set before it starts and gives it back when it ends; a job that does not
/// fit waits in a bounded queue (first in, first out), and one that could never fit is refused
/// at once.
///
/// The caches count against the same budget: each names the most it may keep
/// (``setCeiling(_:for:)``), which is set aside from what jobs can ever get, and reports what it
/// keeps now (``setHeld(_:by:)``), which jobs cannot use while it is held.
///
/// ```swift
/// let budget = MemoryBudget(capacity: 256 << 20, maximumConcurrent: 4)
/// let reservation = try await budget.reserve(48 << 20, for: "a 12 MP decode")
/// defer { reservation.release() }
/// ```
///
/// Memory held while no work runs, such as a download's body as it arrives, is reserved with
/// ``reserveMemory(_:for:)``: it counts against the budget but takes no place under
/// ``maximumConcurrent``, and it waits only for memory, never for a place.
///
/// Pass it to the pipeline with ``AlcedoOptionsInfoItem/memoryBudget(_:)``: the manager then
/// estimates each decode's working set from the source's header (``WorkingSetEstimate``) and
/// reserves it before decoding. ``ImagePrefetcher`` takes one too.
public final class MemoryBudget: Sendable {
    /// The state of a budget at one moment.
    public struct Snapshot: Sendable, Equatable {
        /// The whole budget in bytes.
        public var capacity: Int
        /// Bytes reserved by jobs at work.
        public var reserved: Int
        /// Bytes the caches keep now, by cache name.
        public var held: [String: Int]
        /// The most each cache may keep, by cache name: set aside from what a job can get.
        public var ceilings: [String: Int]
        /// Jobs at work (each holds one reservation).
        public var running: Int
        /// Jobs waiting for a place.
        public var waiting: Int
        /// Jobs waiting because the memory they need is not free (rather than for a place
        /// under ``MemoryBudget/maximumConcurrent``).
        public var waitingForMemory: Int
        /// Jobs that had to wait for memory since the budget was made.
        public var waitedForMemoryTotal: Int
        /// Jobs refused since the budget was made: could never fit, or the queue was full.
        public var refusedTotal: Int
        /// Reservations granted since the budget was made.
        public var grantedTotal: Int

        /// Bytes the caches keep now, all together.
        public var heldTotal: Int { held.values.reduce(0, +) }
        /// Bytes neither reserved nor held (never negative).
        public var free: Int { max(0, capacity - reserved - heldTotal) }
        /// The largest reservation that can ever be granted: the capacity less the caches' ceilings.
        public var largestReservation: Int { max(0, capacity - ceilings.values.reduce(0, +)) }
    }

    /// Something the budget tells its observer.
    public enum Event: Sendable, Equatable {
        /// A job could not start for want of memory and waits (sent when the first such job
        /// starts waiting, not for every job).
        case startedWaitingForMemory(Snapshot)
        /// No job waits for memory any more.
        case stoppedWaitingForMemory(Snapshot)
    }

    private struct Waiter {
        let id: Int
        let bytes: Int
        /// Whether the reservation takes a place under ``maximumConcurrent`` (a job) or memory
        /// alone (``reserveMemory(_:for:)``).
        let takesPlace: Bool
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var reserved = 0
        var held: [String: Int] = [:]
        var ceilings: [String: Int] = [:]
        var running = 0
        /// Reservations outstanding, with or without a place.
        var holders = 0
        var waiters: [Waiter] = []
        /// Waiters admitted to the queue, counted until they leave it (including those not yet
        /// parked on a continuation).
        var queued = 0
        /// Of ``queued``, the memory-only reservations.
        var queuedMemoryOnly = 0
        var nextID = 0
        var headWaitsForMemory = false
        var waitedForMemoryTotal = 0
        var refusedTotal = 0
        var grantedTotal = 0

        var heldTotal: Int { held.values.reduce(0, +) }
        var ceilingTotal: Int { ceilings.values.reduce(0, +) }
    }

    /// The whole budget in bytes.
    public let capacity: Int
    /// The most jobs at work at once, whatever memory is free (default `Int.max`: memory alone limits them).
    public let maximumConcurrent: Int
    /// The most jobs waiting; the next one is refused with
    /// ``MemoryBudgetErrorReason/queueFull(waiting:limit:)`` (default 256).
    public let queueLength: Int
    private let observer: (@Sendable (Event) -> Void)?
    private let onGrant: (@Sendable (Int) -> Void)?
    private let state = Mutex(State())

    /// Creates a budget.
    /// - Parameters:
    ///   - capacity: the whole budget in bytes (at least 1).
    ///   - maximumConcurrent: the most jobs at work at once (default `Int.max`: no limit but memory).
    ///   - queueLength: the most jobs waiting before the next is refused (default 256).
    ///   - observer: told when jobs start and stop waiting for memory (default none); called
    ///     outside the budget's lock, on the thread that changed the state.
    ///   - onGrant: called with the bytes of each reservation granted (by ``reserve(_:for:)``,
    ///     ``reserveMemory(_:for:)`` or ``tryReserve(_:)``), outside the budget's lock, before
    ///     the reservation is handed over (default none). A server uses it to give freed memory
    ///     back to the system when its resident size and the grant together would pass the
    ///     budget: the allocator's free pages are memory the budget does not see.
    public init(capacity: Int, maximumConcurrent: Int = .max, queueLength: Int = 256,
                observer: (@Sendable (Event) -> Void)? = nil, onGrant: (@Sendable (Int) -> Void)? = nil) {
        self.capacity = max(1, capacity)
        self.maximumConcurrent = max(1, maximumConcurrent)
        self.queueLength = max(0, queueLength)
        self.onGrant = onGrant
        self.observer = observer
    }

    /// The budget now.
    public var snapshot: Snapshot {
        state.withLock { makeSnapshot($0) }
    }

    private func makeSnapshot(_ state: State) -> Snapshot {
        Snapshot(capacity: capacity, reserved: state.reserved, held: state.held, ceilings: state.ceilings,
                 running: state.running, waiting: state.queued,
                 waitingForMemory: state.headWaitsForMemory ? state.queued : 0,
                 waitedForMemoryTotal: state.waitedForMemoryTotal, refusedTotal: state.refusedTotal,
                 grantedTotal: state.grantedTotal)
    }

    /// The largest reservation that can ever be granted: ``capacity`` less the caches' ceilings.
    public var largestReservation: Int { snapshot.largestReservation }

    // MARK: Reserving

    /// Reserves `bytes` (and one place under ``maximumConcurrent``), waiting in the queue while
    /// they are not free. Release the reservation when the work ends (it is released when it
    /// is deinitialised otherwise).
    /// - Parameters:
    ///   - bytes: the estimated working set (negative counts as 0).
    ///   - what: what the memory is for, named in the error.
    /// - Throws: ``AlcedoError/memoryBudgetError(reason:)`` with
    ///   ``MemoryBudgetErrorReason/neverFits(what:bytes:largest:capacity:)`` when `bytes` is
    ///   over ``largestReservation`` (at once, without waiting),
    ///   ``MemoryBudgetErrorReason/queueFull(waiting:limit:)`` when ``queueLength`` jobs wait
    ///   already; `.requestError(.cancelled)` when the task is cancelled while waiting.
    public func reserve(_ bytes: Int, for what: String = "the work") async throws(AlcedoError) -> MemoryReservation {
        try await reserve(bytes, for: what, takesPlace: true)
    }

    /// Reserves `bytes` of memory without a place under ``maximumConcurrent``: for memory held
    /// while no work runs (a download's body as it arrives, see
    /// ``ImageDownloader/Configuration/memoryBudget``). It waits only for memory: jobs waiting
    /// for a place do not hold it up. Grow it with ``MemoryReservation/grow(to:)`` as more
    /// arrives (that never waits); release it when the memory is handed on.
    /// - Parameters:
    ///   - bytes: the bytes to hold (negative counts as 0).
    ///   - what: what the memory is for, named in the error.
    /// - Throws: as ``reserve(_:for:)``.
    public func reserveMemory(_ bytes: Int, for what: String = "the data") async throws(AlcedoError) -> MemoryReservation {
        try await reserve(bytes, for: what, takesPlace: false)
    }

    private func reserve(_ bytes: Int, for what: String, takesPlace: Bool) async throws(AlcedoError) -> MemoryReservation {
        let bytes = max(0, bytes)
        enum Admission { case granted, queued(Int), neverFits(Int), queueFull(Int) }
        let admission: Admission = state.withLock { state in
            let largest = max(0, capacity - state.ceilingTotal)
            if bytes > largest {
                state.refusedTotal += 1
                return .neverFits(largest)
            }
            // A job goes first only when nobody waits; memory alone also when the ones waiting
            // wait for a place, not for memory.
            let nobodyAhead = takesPlace ? state.waiters.isEmpty && state.queued == 0
                : state.queuedMemoryOnly == 0 && !state.headWaitsForMemory
            if nobodyAhead && fits(bytes, takesPlace: takesPlace, state) {
                grant(bytes, takesPlace: takesPlace, &state)
                return .granted
            }
            guard state.queued < queueLength else {
                state.refusedTotal += 1
                return .queueFull(state.queued)
            }
            state.queued += 1
            if !takesPlace { state.queuedMemoryOnly += 1 }
            state.nextID += 1
            return .queued(state.nextID)
        }
        switch admission {
        case .granted:
            onGrant?(bytes)
            return MemoryReservation(budget: self, bytes: bytes, takesPlace: takesPlace)
        case .neverFits(let largest):
            throw .memoryBudgetError(reason: .neverFits(what: what, bytes: bytes, largest: largest, capacity: capacity))
        case .queueFull(let waiting):
            throw .memoryBudgetError(reason: .queueFull(waiting: waiting, limit: queueLength))
        case .queued(let id):
            let granted = await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                    let immediate: Bool? = state.withLock { state in
                        if Task.isCancelled {
                            state.queued -= 1
                            if !takesPlace { state.queuedMemoryOnly -= 1 }
                            return false
                        }
                        state.waiters.append(Waiter(id: id, bytes: bytes, takesPlace: takesPlace, continuation: continuation))
                        return nil
                    }
                    if let immediate {
                        continuation.resume(returning: immediate)
                        return
                    }
                    // Whatever was released between the first look and now is handed out here.
                    let (resumed, changed) = state.withLock { state in self.admitWaiters(&state) }
                    for waiter in resumed { waiter.resume(returning: true) }
                    if let changed { observer?(changed) }
                }
            } onCancel: {
                let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    state.queued -= 1
                    if !state.waiters[index].takesPlace { state.queuedMemoryOnly -= 1 }
                    return state.waiters.remove(at: index).continuation
                }
                waiter?.resume(returning: false)
                // The head may have changed: the next ones may fit now.
                self.wake()
            }
            guard granted else { throw .requestError(reason: .cancelled) }
            onGrant?(bytes)
            return MemoryReservation(budget: self, bytes: bytes, takesPlace: takesPlace)
        }
    }

    /// Reserves `bytes` if they are free now and nobody waits; `nil` otherwise (never waits).
    public func tryReserve(_ bytes: Int) -> MemoryReservation? {
        let bytes = max(0, bytes)
        let granted = state.withLock { state -> Bool in
            guard state.waiters.isEmpty, state.queued == 0, bytes <= capacity - state.ceilingTotal,
                  fits(bytes, takesPlace: true, state) else {
                return false
            }
            grant(bytes, takesPlace: true, &state)
            return true
        }
        guard granted else { return nil }
        onGrant?(bytes)
        return MemoryReservation(budget: self, bytes: bytes, takesPlace: true)
    }

    private func fits(_ bytes: Int, takesPlace: Bool, _ state: State) -> Bool {
        if takesPlace && state.running >= maximumConcurrent { return false }
        // A reservation that is alone is always granted: nothing else would ever free memory for it.
        return state.holders == 0 || state.reserved + state.heldTotal + bytes <= capacity
    }

    private func grant(_ bytes: Int, takesPlace: Bool, _ state: inout State) {
        state.reserved += bytes
        if takesPlace { state.running += 1 }
        state.holders += 1
        state.grantedTotal += 1
    }

    /// Hands places to the waiters at the head of the queue that fit now, in order; returns
    /// their continuations (resume them outside the lock) and the event to report, if any.
    private func admitWaiters(_ state: inout State) -> ([CheckedContinuation<Bool, Never>], Event?) {
        var resumed: [CheckedContinuation<Bool, Never>] = []
        var index = 0
        // In order; a job that waits for a place (not for memory) lets the memory-only
        // reservations behind it pass, a reservation that waits for memory stops the walk.
        var placesTaken = false
        while index < state.waiters.count {
            let waiter = state.waiters[index]
            if waiter.takesPlace && placesTaken {
                index += 1
                continue
            }
            if fits(waiter.bytes, takesPlace: waiter.takesPlace, state) {
                state.waiters.remove(at: index)
                state.queued -= 1
                if !waiter.takesPlace { state.queuedMemoryOnly -= 1 }
                grant(waiter.bytes, takesPlace: waiter.takesPlace, &state)
                resumed.append(waiter.continuation)
            } else if waiter.takesPlace && state.running >= maximumConcurrent {
                placesTaken = true
                index += 1
            } else {
                break
            }
        }
        let wasWaiting = state.headWaitsForMemory
        // Someone waits for memory: a memory-only reservation, or a job while a place is free.
        state.headWaitsForMemory = state.waiters.contains { !$0.takesPlace || state.running < maximumConcurrent }
        var event: Event?
        if state.headWaitsForMemory && !wasWaiting {
            state.waitedForMemoryTotal += state.waiters.count
            event = .startedWaitingForMemory(makeSnapshot(state))
        } else if !state.headWaitsForMemory && wasWaiting {
            event = .stoppedWaitingForMemory(makeSnapshot(state))
        }
        return (resumed, event)
    }

    /// Lets in the waiters that fit now.
    private func wake() {
        let (resumed, event) = state.withLock { state in admitWaiters(&state) }
        for continuation in resumed { continuation.resume(returning: true) }
        if let event { observer?(event) }
    }

    /// Gives back a reservation's bytes and place (called by ``MemoryReservation``).
    func give(back bytes: Int, tookPlace: Bool) {
        state.withLock { state in
            state.reserved -= bytes
            if tookPlace { state.running -= 1 }
            state.holders -= 1
        }
        wake()
    }

    /// The name under which ``Snapshot/held`` shows the memory of renders abandoned past their
    /// CPU budget that still draw (see ``DecodingOptions/abandonedWorkBudget``).
    public static let abandonedRendersName = "abandoned renders"

    /// Counts `bytes` as held under ``abandonedRendersName`` until the returned closure is called
    /// (once; later calls do nothing). Never waits: the memory is in use already.
    func holdAbandoned(_ bytes: Int) -> @Sendable () -> Void {
        let name = Self.abandonedRendersName
        state.withLock { $0.held[name, default: 0] += bytes }
        let done = Mutex(false)
        return { [self] in
            guard !done.withLock({ state in defer { state = true }; return state }) else { return }
            state.withLock { state in
                let left = (state.held[name] ?? 0) - bytes
                state.held[name] = left > 0 ? left : nil
            }
            wake()
        }
    }

    /// Changes a reservation's bytes by `delta` without waiting (called by ``MemoryReservation``).
    func adjust(by delta: Int) {
        state.withLock { $0.reserved += delta }
        if delta < 0 { wake() }
    }

    // MARK: Caches

    /// Sets aside `bytes` for the cache `name`: the most it may keep. Jobs can never reserve
    /// more than ``capacity`` less the ceilings; 0 removes the cache's ceiling.
    public func setCeiling(_ bytes: Int, for name: String) {
        state.withLock { $0.ceilings[name] = bytes > 0 ? bytes : nil }
        wake()
    }

    /// Records that the cache `name` keeps `bytes` now (never waits: a cache keeps its
    /// ceiling, and jobs admitted later see what is left).
    public func setHeld(_ bytes: Int, by name: String) {
        let lowered = state.withLock { state -> Bool in
            let old = state.held[name] ?? 0
            state.held[name] = max(0, bytes)
            return bytes < old
        }
        if lowered { wake() }
    }
}

/// Memory reserved from a ``MemoryBudget``; released once, by ``release()`` or when it is
/// deinitialised.
public final class MemoryReservation: Sendable {
    /// The budget it was taken from.
    public let budget: MemoryBudget
    /// Whether it holds a place under ``MemoryBudget/maximumConcurrent`` (a job) or memory
    /// alone (``MemoryBudget/reserveMemory(_:for:)``).
    public let takesPlace: Bool
    private let current: Mutex<Int?>

    init(budget: MemoryBudget, bytes: Int, takesPlace: Bool) {
        self.budget = budget
        self.takesPlace = takesPlace
        current = Mutex(bytes)
    }

    /// The bytes reserved (0 once released).
    public var bytes: Int { current.withLock { $0 ?? 0 } }

    /// Lowers the reservation to `bytes` (a job that needs less than it reserved, for the rest
    /// of its work); a larger value is ignored (``grow(to:)`` raises it without waiting).
    public func shrink(to bytes: Int) {
        let delta = current.withLock { value -> Int in
            guard let old = value, bytes < old else { return 0 }
            value = max(0, bytes)
            return value! - old
        }
        if delta != 0 { budget.adjust(by: delta) }
    }

    /// Raises the reservation to `bytes` without waiting (memory that arrived already, such as
    /// a download's next chunk: it is held whether or not the budget has room, and the jobs
    /// admitted later see less free); a smaller value is ignored, and so is a released reservation.
    public func grow(to bytes: Int) {
        let delta = current.withLock { value -> Int in
            guard let old = value, bytes > old else { return 0 }
            value = bytes
            return bytes - old
        }
        if delta != 0 { budget.adjust(by: delta) }
    }

    /// Gives the memory back (again: nothing).
    public func release() {
        let bytes = current.withLock { value -> Int? in
            defer { value = nil }
            return value
        }
        if let bytes { budget.give(back: bytes, tookPlace: takesPlace) }
    }

    deinit { release() }
}
