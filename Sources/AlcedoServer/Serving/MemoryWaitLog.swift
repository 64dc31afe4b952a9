import Alcedo
import Logging
import Synchronization

/// The log line the memory budget makes when requests start waiting for memory: one per
/// episode, at most one per 10 s, with how many waited since the last line.
final class MemoryWaitLog: Sendable {
    private struct State {
        var lastLine: ContinuousClock.Instant?
        var episodes = 0
    }

    private let logger: Logger
    private let state = Mutex(State())
    private let interval: Duration

    init(logger: Logger = Logger(label: "alcedo.serve.memory"), interval: Duration = .seconds(10)) {
        self.logger = logger
        self.interval = interval
    }

    func record(_ event: MemoryBudget.Event) {
        guard case .startedWaitingForMemory(let snapshot) = event else { return }
        let now = ContinuousClock.now
        let episodes: Int? = state.withLock { state in
            state.episodes += 1
            if let last = state.lastLine, now - last < interval { return nil }
            state.lastLine = now
            defer { state.episodes = 0 }
            return state.episodes
        }
        guard let episodes else { return }
        let mib = { (bytes: Int) in "\(bytes >> 20) MiB" }
        logger.warning("""
            requests wait for memory: \(snapshot.waitingForMemory) waiting, \(mib(snapshot.reserved)) reserved by \
            \(snapshot.running) at work, \(mib(snapshot.heldTotal)) held by the caches and the process, of \
            \(mib(snapshot.capacity)) (--max-memory); \(episodes) time(s) since the last such line
            """)
    }
}
