#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The table behind ``MemoryStorage/Backend``: a dictionary from key to slot and a doubly
/// linked list threaded through an array of nodes, newest first. Lookup, insert, move to the
/// front and removal of the oldest are O(1); freed slots are reused, so a table in steady state
/// allocates nothing per operation. Not thread-safe: the backend holds it in a mutex.
struct LRUTable<Value> {
    struct Node {
        var key: String
        /// `nil` for a free slot.
        var value: Value?
        var cost: Int
        /// The expiration the entry was stored with, re-applied by `.cacheTime` extension.
        var expiration: StorageExpiration
        var expiresAt: Date
        /// The neighbour towards the newest end, or -1.
        var newer: Int
        /// The neighbour towards the oldest end, or -1.
        var older: Int
    }

    private(set) var nodes: [Node] = []
    private var freeSlots: [Int] = []
    private var slots: [String: Int] = [:]
    private var newest = -1
    private var oldest = -1
    private(set) var totalCost = 0

    var count: Int { slots.count }

    func slot(forKey key: String) -> Int? { slots[key] }

    /// The slot of the least recently used entry, or `nil` when the table is empty.
    var oldestSlot: Int? { oldest >= 0 ? oldest : nil }

    /// Makes `slot` the most recently used entry.
    mutating func touch(_ slot: Int) {
        guard slot != newest else { return }
        unlink(slot)
        linkAsNewest(slot)
    }

    /// Inserts a new entry as the most recently used one. The key must not be present.
    mutating func insert(key: String, value: Value, cost: Int, expiration: StorageExpiration, expiresAt: Date) {
        let node = Node(key: key, value: value, cost: cost, expiration: expiration, expiresAt: expiresAt,
                        newer: -1, older: -1)
        let slot: Int
        if let reused = freeSlots.popLast() {
            slot = reused
            nodes[slot] = node
        } else {
            slot = nodes.count
            nodes.append(node)
        }
        slots[key] = slot
        totalCost += cost
        linkAsNewest(slot)
    }

    /// Replaces the value of an occupied slot and makes it the newest; returns the old value.
    mutating func replace(_ slot: Int, value: Value, cost: Int, expiration: StorageExpiration, expiresAt: Date) -> Value? {
        let old = nodes[slot].value
        totalCost += cost - nodes[slot].cost
        nodes[slot].value = value
        nodes[slot].cost = cost
        nodes[slot].expiration = expiration
        nodes[slot].expiresAt = expiresAt
        touch(slot)
        return old
    }

    mutating func setExpiresAt(_ date: Date, of slot: Int) {
        nodes[slot].expiresAt = date
    }

    /// Removes the entry in `slot` and returns its value (to be released outside any lock).
    @discardableResult
    mutating func remove(_ slot: Int) -> Value? {
        unlink(slot)
        let value = nodes[slot].value
        slots[nodes[slot].key] = nil
        totalCost -= nodes[slot].cost
        nodes[slot].value = nil
        nodes[slot].key = ""
        nodes[slot].cost = 0
        freeSlots.append(slot)
        return value
    }

    /// Empties the table and returns the values it held.
    mutating func removeAll() -> [Value] {
        let values = nodes.compactMap(\.value)
        self = LRUTable()
        return values
    }

    private mutating func unlink(_ slot: Int) {
        let newer = nodes[slot].newer
        let older = nodes[slot].older
        if newer >= 0 { nodes[newer].older = older } else { newest = older }
        if older >= 0 { nodes[older].newer = newer } else { oldest = newer }
        nodes[slot].newer = -1
        nodes[slot].older = -1
    }

    private mutating func linkAsNewest(_ slot: Int) {
        nodes[slot].newer = -1
        nodes[slot].older = newest
        if newest >= 0 { nodes[newest].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
    }

    /// The keys from the most to the least recently used (for tests and diagnostics).
    var keysNewestFirst: [String] {
        var keys: [String] = []
        var slot = newest
        while slot >= 0 {
            keys.append(nodes[slot].key)
            slot = nodes[slot].older
        }
        return keys
    }
}
