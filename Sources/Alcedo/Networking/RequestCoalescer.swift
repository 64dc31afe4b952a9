#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// Runs one piece of work per key however many callers want its result.
///
/// The first caller of a key starts the work in its own task; later callers of the same key
/// join it while it runs. Each caller can leave on its own (it gets `.cancelled` at once);
/// the work is cancelled when the last caller leaves. Progress reported by the work goes to
/// every caller still there, in the order it was reported; a caller that joins after some
/// progress was reported first gets ``DownloadProgress/catchUp`` of the latest report (the
/// body so far in one piece), then every later report, with no gap and no repeat. Every
/// caller's completion is called exactly once.
final class RequestCoalescer<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    typealias Completion = @Sendable (Result<Value, AlcedoError>) -> Void
    typealias Work = @Sendable (WorkContext) async -> Result<Value, AlcedoError>

    /// What the running work can see and do.
    struct WorkContext: Sendable {
        /// The priority of the work: the highest of its callers' tickets, raised when one joins.
        let ticket: PriorityTicket
        /// Sends progress to every current caller.
        let reportProgress: @Sendable (DownloadProgress) -> Void
    }

    /// One caller of one key, to leave with ``cancel(_:)``.
    struct Subscription: Sendable, Hashable {
        let key: Key
        let id: UInt64
    }

    private struct Caller {
        let progress: ProgressMailbox?
        let completion: Completion
    }

    private struct Entry {
        let generation: UInt64
        let ticket: PriorityTicket
        var callers: [UInt64: Caller] = [:]
        var task: Task<Void, Never>?
        /// The latest progress reported, what a caller joining now must catch up with.
        var latestProgress: DownloadProgress?
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())
    /// The URL a key asks for, named in a cancelled caller's ``SessionDataTask``.
    private let originalURL: @Sendable (Key) -> URL?

    /// A coalescer whose cancelled callers get `.taskCancelled` with the URL `originalURL`
    /// names for their key (none by default) and their own token.
    init(originalURL: @escaping @Sendable (Key) -> URL? = { _ in nil }) {
        self.originalURL = originalURL
    }

    /// What a caller that leaves gets: Kingfisher's `.taskCancelled(task:token:)`.
    private func cancellation(_ key: Key, token: UInt64) -> AlcedoError {
        .requestError(reason: .taskCancelled(task: SessionDataTask(originalURL: originalURL(key)), token: Int(truncatingIfNeeded: token)))
    }

    /// Adds a caller for `key`, starting `work` when nobody else is waiting for that key.
    func subscribe(_ key: Key, priority: PriorityTicket, progress: (@Sendable (DownloadProgress) -> Void)?,
                   completion: @escaping Completion, work: @escaping Work) -> Subscription {
        let mailbox = progress.map(ProgressMailbox.init)
        let (subscription, generation, ticket, isNew, drains) = state.withLock { state in
            state.nextID += 1
            let id = state.nextID
            let caller = Caller(progress: mailbox, completion: completion)
            // The entry is changed in place: a copy taken out and stored back would copy its
            // callers on every join, quadratic in the callers of one key.
            if let index = state.entries.index(forKey: key) {
                state.entries.values[index].callers[id] = caller
                let entry = state.entries.values[index]
                entry.ticket.link(priority)
                // Under the lock that orders the reports: the catch-up comes before any later one.
                let drains = entry.latestProgress.flatMap { mailbox?.post($0.catchUp) } ?? false
                return (Subscription(key: key, id: id), entry.generation, entry.ticket, false, drains)
            }
            var entry = Entry(generation: id, ticket: PriorityTicket(priority: .low))
            entry.ticket.link(priority)
            entry.callers[id] = caller
            state.entries[key] = entry
            return (Subscription(key: key, id: id), id, entry.ticket, true, false)
        }
        if drains { mailbox?.drain() }
        guard isNew else { return subscription }
        let context = WorkContext(ticket: ticket, reportProgress: { [weak self] progress in
            self?.broadcast(progress, key: key, generation: generation)
        })
        let task = Task { [weak self] in
            let result = await work(context)
            self?.finish(key, generation: generation, with: result)
        }
        let attached = state.withLock { state in
            guard state.entries[key]?.generation == generation else { return false }
            state.entries[key]?.task = task
            return true
        }
        // Every caller left before the task could be recorded.
        if !attached { task.cancel() }
        return subscription
    }

    /// Removes one caller (its completion gets `.cancelled`); cancels the work if it was the last.
    func cancel(_ subscription: Subscription) {
        let (caller, task): (Caller?, Task<Void, Never>?) = state.withLock { state in
            // In place, as in `subscribe`.
            guard let index = state.entries.index(forKey: subscription.key),
                  let caller = state.entries.values[index].callers.removeValue(forKey: subscription.id) else { return (nil, nil) }
            if state.entries.values[index].callers.isEmpty {
                let task = state.entries.values[index].task
                state.entries.remove(at: index)
                return (caller, task)
            }
            return (caller, nil)
        }
        task?.cancel()
        caller?.completion(.failure(cancellation(subscription.key, token: subscription.id)))
    }

    /// Cancels the work of every key matching `predicate` and all of its callers.
    func cancelAll(where predicate: (Key) -> Bool = { _ in true }) {
        let removed: [(Key, Entry)] = state.withLock { state in
            let keys = state.entries.keys.filter(predicate)
            return keys.compactMap { key in state.entries.removeValue(forKey: key).map { (key, $0) } }
        }
        for (key, entry) in removed {
            entry.task?.cancel()
            for (id, caller) in entry.callers {
                caller.completion(.failure(cancellation(key, token: id)))
            }
        }
    }

    /// The number of callers waiting for `key`.
    func callerCount(_ key: Key) -> Int {
        state.withLock { $0.entries[key]?.callers.count ?? 0 }
    }

    /// The number of keys with work in flight.
    var inFlightCount: Int { state.withLock { $0.entries.count } }

    /// The callers waiting, over every key.
    var totalCallerCount: Int { state.withLock { $0.entries.values.reduce(0) { $0 + $1.callers.count } } }

    /// Waits for the value of `key` as one caller, leaving when the calling task is cancelled.
    func value(for key: Key, priority: PriorityTicket, progress: (@Sendable (DownloadProgress) -> Void)?,
               work: @escaping Work) async throws(AlcedoError) -> Value {
        if Task.isCancelled { throw cancellation(key, token: 0) }
        let handle = Mutex<HandleState>(.pending)
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, AlcedoError>, Never>) in
                let subscription = subscribe(key, priority: priority, progress: progress,
                                             completion: { continuation.resume(returning: $0) }, work: work)
                let cancelledMeanwhile = handle.withLock { state in
                    if case .cancelled = state { return true }
                    state = .subscribed(subscription)
                    return false
                }
                if cancelledMeanwhile { cancel(subscription) }
            }
        } onCancel: {
            let subscription: Subscription? = handle.withLock { state in
                defer { state = .cancelled }
                if case .subscribed(let subscription) = state { return subscription }
                return nil
            }
            if let subscription { cancel(subscription) }
        }
        return try result.get()
    }

    private enum HandleState {
        case pending
        case subscribed(Subscription)
        case cancelled
    }

    /// Posts `progress` to every caller under the lock (so that a joining caller's catch-up
    /// is ordered with it), then calls the handlers outside it.
    private func broadcast(_ progress: DownloadProgress, key: Key, generation: UInt64) {
        let mailboxes = state.withLock { state -> [ProgressMailbox] in
            guard let entry = state.entries[key], entry.generation == generation else { return [] }
            state.entries[key]?.latestProgress = progress
            return entry.callers.values.compactMap { caller in
                guard let mailbox = caller.progress, mailbox.post(progress) else { return nil }
                return mailbox
            }
        }
        for mailbox in mailboxes { mailbox.drain() }
    }

    private func finish(_ key: Key, generation: UInt64, with result: Result<Value, AlcedoError>) {
        let callers: [Caller] = state.withLock { state in
            guard let entry = state.entries[key], entry.generation == generation else { return [] }
            state.entries[key] = nil
            return Array(entry.callers.values)
        }
        for caller in callers { caller.completion(result) }
    }
}

/// One caller's progress handler with the reports posted to it and not yet delivered: reports
/// are posted in order under the coalescer's lock and delivered outside it, in that order, one
/// at a time, by whichever thread posted to an idle mailbox (user code never runs under the lock).
final class ProgressMailbox: Sendable {
    private struct Queue {
        var reports: [DownloadProgress] = []
        var draining = false
    }

    private let handler: @Sendable (DownloadProgress) -> Void
    private let queue = Mutex(Queue())

    init(_ handler: @escaping @Sendable (DownloadProgress) -> Void) {
        self.handler = handler
    }

    /// Queues `progress`; `true` when the caller must now ``drain()`` (nobody else is delivering).
    func post(_ progress: DownloadProgress) -> Bool {
        queue.withLock { queue in
            queue.reports.append(progress)
            guard !queue.draining else { return false }
            queue.draining = true
            return true
        }
    }

    /// Delivers the queued reports in order until none is left.
    func drain() {
        while true {
            let reports = queue.withLock { queue -> [DownloadProgress] in
                defer { queue.reports = [] }
                if queue.reports.isEmpty { queue.draining = false }
                return queue.reports
            }
            if reports.isEmpty { return }
            for report in reports { handler(report) }
        }
    }
}
