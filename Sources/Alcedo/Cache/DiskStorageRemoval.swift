import Synchronization

extension DiskStorage {
    /// Entries the disk storage removed on its own: expired, over the size limit, or corrupt.
    public struct Removal: Sendable, Hashable {
        /// Why entries are removed.
        public enum Reason: String, Sendable, Hashable {
            /// Their expiration passed.
            case expired
            /// The folder was over its size limit; these were the least recently used.
            case sizeLimit
            /// The file was not a valid entry (bad header, truncated, written by something else).
            case corrupt
        }

        /// Why the entries were removed.
        public let reason: Reason
        /// The hashes (file names without extension) of the removed entries.
        public let hashes: [String]
    }

    /// What one clean-up removed.
    public struct CleanUpReport: Sendable, Hashable {
        /// Hashes of the entries removed because they had expired.
        public var expired: [String] = []
        /// Hashes of the least recently used entries removed to bring the folder under its size limit.
        public var sizeLimit: [String] = []
        /// Hashes of files removed because they were not valid entries.
        public var corrupt: [String] = []
        /// How many temporary files left by interrupted writes were removed.
        public var temporaryFiles = 0

        /// Every removed hash.
        public var all: [String] { expired + sizeLimit + corrupt }
    }
}

/// Sends every ``DiskStorage/Removal`` to all streams made by ``DiskStorage/EntryStore/removals()``.
final class RemovalBroadcast: Sendable {
    private let state = Mutex<(next: Int, continuations: [Int: AsyncStream<DiskStorage.Removal>.Continuation])>(
        (0, [:]))

    func makeStream() -> AsyncStream<DiskStorage.Removal> {
        let (stream, continuation) = AsyncStream<DiskStorage.Removal>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        let id = state.withLock { state -> Int in
            state.next += 1
            state.continuations[state.next] = continuation
            return state.next
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    func send(_ reason: DiskStorage.Removal.Reason, _ hashes: [String]) {
        guard !hashes.isEmpty else { return }
        let continuations = state.withLock { Array($0.continuations.values) }
        let removal = DiskStorage.Removal(reason: reason, hashes: hashes)
        for continuation in continuations { continuation.yield(removal) }
    }
}
