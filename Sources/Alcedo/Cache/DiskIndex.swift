import Synchronization

/// What ``DiskStorage/EntryStore`` knows about its folder without touching it: for every entry,
/// its file size, last access and expiration, and the total size.
///
/// It is the `maybeCached` set of Kingfisher made exact: a key the index does not hold is a
/// miss without a filesystem call, and the size limit is checked after every store without
/// listing the folder. It is loaded by one scan of the folder on first use, and rebuilt by
/// every clean-up scan, which picks up entries other processes wrote. Changes made while a
/// scan runs are replayed on top of its result, so a scan never loses a concurrent store.
final class DiskIndex: Sendable {
    struct Entry: Equatable, Sendable {
        var fileSize: Int
        var lastAccess: Int64
        var expiration: Int64
        /// The file as it was when this entry was read or written (`nil`: unknown). A scan
        /// that finds the same stamp keeps the entry without reading the file's header again.
        var stamp: POSIXFile.Stamp?
    }

    private struct State {
        var loaded = false
        var entries: [DiskEntryName: Entry] = [:]
        var totalSize = 0
        var scanning = false
        /// Changes since the running scan began: an entry, or `nil` for a removal.
        var changesDuringScan: [DiskEntryName: Entry?] = [:]

        mutating func apply(_ id: DiskEntryName, _ entry: Entry?) {
            if let old = entries[id] { totalSize -= old.fileSize }
            entries[id] = entry
            if let entry { totalSize += entry.fileSize }
            if scanning { changesDuringScan[id] = .some(entry) }
        }
    }

    private let state = Mutex(State())
    /// Held for the whole of a scan, so that only one runs at a time.
    let scanGate = Mutex(())

    var isLoaded: Bool { state.withLock { $0.loaded } }
    var totalSize: Int { state.withLock { $0.totalSize } }
    var count: Int { state.withLock { $0.entries.count } }

    func entry(_ id: DiskEntryName) -> Entry? { state.withLock { $0.entries[id] } }

    /// Every entry (a copy-on-write reference: taking it costs nothing).
    var snapshot: [DiskEntryName: Entry] { state.withLock { $0.entries } }

    func set(_ id: DiskEntryName, _ entry: Entry) { state.withLock { $0.apply(id, entry) } }

    func remove(_ id: DiskEntryName) { state.withLock { $0.apply(id, nil) } }

    /// Records an access: new last access and expiration, when the entry is known.
    func touch(_ id: DiskEntryName, lastAccess: Int64, expiration: Int64) {
        state.withLock { state in
            guard var entry = state.entries[id] else { return }
            entry.lastAccess = lastAccess
            entry.expiration = expiration
            state.apply(id, entry)
        }
    }

    /// Marks the start of a scan (call with ``scanGate`` held).
    func beginScan() {
        state.withLock { state in
            state.scanning = true
            state.changesDuringScan = [:]
        }
    }

    /// Installs a scan's result, replaying the changes made while it ran. An access this
    /// process recorded later than the file says (the file is written at most once per
    /// granularity) is kept.
    func finishScan(_ scanned: [DiskEntryName: Entry]) {
        state.withLock { state in
            var entries = scanned
            for (id, old) in state.entries {
                guard let found = entries[id], old.lastAccess > found.lastAccess else { continue }
                entries[id] = Entry(fileSize: found.fileSize, lastAccess: old.lastAccess, expiration: old.expiration,
                                    stamp: found.stamp)
            }
            for (id, change) in state.changesDuringScan { entries[id] = change }
            state.entries = entries
            state.totalSize = entries.values.reduce(0) { $0 + $1.fileSize }
            state.scanning = false
            state.changesDuringScan = [:]
            state.loaded = true
        }
    }

    /// Ends a failed scan, keeping the index as it was.
    func abortScan() {
        state.withLock { state in
            state.scanning = false
            state.changesDuringScan = [:]
        }
    }

    /// Marks the index as not loaded: the next operation that needs it rescans the folder (which
    /// was found missing and made again, so the entries the index holds may be gone, while
    /// writers may already have put new ones in it).
    func invalidate() {
        state.withLock { $0.loaded = false }
    }

    /// The entries expired at `now`. The entries are snapshotted under the lock (a
    /// copy-on-write reference) and filtered outside it.
    func expired(at now: Int64) -> [(DiskEntryName, Entry)] {
        let entries = state.withLock { $0.entries }
        return entries.filter { $0.value.expiration <= now }.map { ($0.key, $0.value) }
    }

    /// The least recently accessed entries to remove for the total to fall to `target`
    /// bytes, oldest first, never including `protected`. Sorted outside the lock.
    func leastRecentlyUsed(downTo target: Int, protecting protected: DiskEntryName?) -> [(DiskEntryName, Entry)] {
        let (entries, totalSize) = state.withLock { ($0.entries, $0.totalSize) }
        guard totalSize > target else { return [] }
        let candidates = entries.filter { $0.key != protected }.sorted { $0.value.lastAccess < $1.value.lastAccess }
        var excess = totalSize - target
        var victims: [(DiskEntryName, Entry)] = []
        for candidate in candidates where excess > 0 {
            victims.append((candidate.key, candidate.value))
            excess -= candidate.value.fileSize
        }
        return victims
    }
}
