import Synchronization

/// The variant keys of image paths that were revalidated recently, so that the next
/// conditional request for the same path is answered before its URL is parsed.
///
/// Behind a CDN most requests that reach the proxy are revalidations: the CDN's copy has
/// expired and it asks again with `If-None-Match`. Their answer is a byte comparison of that
/// header with the stored result's ETag, so nothing of the URL needs to be understood again:
/// the exact request path and `Accept` header (which decide the variant, through the
/// configuration that does not change while serving) lead to the variant key, the key to the
/// result in memory, and the result to its ETag. A path is recorded here only after a
/// conditional request for it went the whole way (its signature verified, its source
/// allowed), and an entry is only a pointer: a result that expired or was evicted sends the
/// request the whole way again.
///
/// Memory is bounded by the bytes of the keys: two generations of at most
/// ``generationBytes`` each; when the current one is full it becomes the previous one, and
/// a path found only in the previous generation moves back to the current one.
final class RevalidationTable: Sendable {
    /// What a recorded path leads to.
    struct Entry: Sendable {
        /// The key of the result in the ``ResultStore``.
        let variantKey: String
        /// Whether the response is negotiated (it then carries `Vary: Accept`).
        let negotiated: Bool
    }

    private struct Generations {
        var current: [String: Entry] = [:]
        var currentBytes = 0
        var previous: [String: Entry] = [:]
    }

    /// The most bytes of paths and keys one generation holds (default 1 MiB).
    let generationBytes: Int
    private let state = Mutex(Generations())

    /// A table whose two generations hold at most `generationBytes` bytes of keys each.
    init(generationBytes: Int = 1 << 20) {
        self.generationBytes = generationBytes
    }

    /// The table key of a request: its path and its `Accept` values, in order.
    static func key(path: String, accept: [String]) -> String {
        var key = path
        for value in accept {
            key.append("\n")
            key.append(value)
        }
        return key
    }

    /// The entry recorded for `key`, if any.
    func entry(for key: String) -> Entry? {
        state.withLock { state in
            if let entry = state.current[key] { return entry }
            guard let entry = state.previous.removeValue(forKey: key) else { return nil }
            Self.insert(key, entry, into: &state, limit: generationBytes)
            return entry
        }
    }

    /// Records `entry` for `key` (replacing what was there).
    func record(_ key: String, _ entry: Entry) {
        state.withLock { state in
            if state.current[key] != nil {
                state.current[key] = entry
                return
            }
            Self.insert(key, entry, into: &state, limit: generationBytes)
        }
    }

    /// The number of paths recorded, both generations (for tests).
    var count: Int { state.withLock { $0.current.count + $0.previous.count } }

    private static func insert(_ key: String, _ entry: Entry, into state: inout Generations, limit: Int) {
        let bytes = key.utf8.count + entry.variantKey.utf8.count
        guard bytes <= limit else { return }
        if state.currentBytes + bytes > limit {
            state.previous = state.current
            state.current = [:]
            state.currentBytes = 0
        }
        state.current[key] = entry
        state.currentBytes += bytes
    }
}
