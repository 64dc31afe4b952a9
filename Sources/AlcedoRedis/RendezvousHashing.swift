/// Rendezvous (highest-random-weight) hashing: a key goes to the node with the highest
/// score `hash(node, key)`. Adding a node moves to it only the keys it now wins (about 1/n);
/// removing one moves only the keys it held, each to its second-best node. No ring, no
/// virtual nodes, no state besides the node names.
public struct RendezvousHashing: Sendable, Hashable {
    /// The node names, in the order given.
    public let nodes: [String]
    private let seeds: [UInt64]

    /// Creates the hashing over `nodes` (their names decide the placement, not their order).
    public init(nodes: [String]) {
        self.nodes = nodes
        seeds = nodes.map { Self.fnv1a(Array($0.utf8)) }
    }

    /// The index in ``nodes`` of the node that holds `key`, or `nil` without nodes.
    public func node(for key: String) -> Int? {
        ranking(for: key).first
    }

    /// Every node's index, best first, for `key`.
    public func ranking(for key: String) -> [Int] {
        let keyHash = Self.fnv1a(Array(key.utf8))
        return seeds.indices.sorted { a, b in
            let scoreA = Self.mix(keyHash ^ seeds[a]), scoreB = Self.mix(keyHash ^ seeds[b])
            return scoreA != scoreB ? scoreA > scoreB : nodes[a] < nodes[b]
        }
    }

    /// 64-bit FNV-1a.
    static func fnv1a(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return hash
    }

    /// A strong 64-bit finalizer (MurmurHash3's fmix64), so close inputs give unrelated scores.
    static func mix(_ value: UInt64) -> UInt64 {
        var x = value
        x ^= x >> 33
        x = x &* 0xFF51_AFD7_ED55_8CCD
        x ^= x >> 33
        x = x &* 0xC4CE_B9FE_1A85_EC53
        x ^= x >> 33
        return x
    }
}
