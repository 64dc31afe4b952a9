/// Why a ``MemoryBudget`` refused a reservation.
public enum MemoryBudgetErrorReason: Sendable, CustomStringConvertible {
    /// `what` needs `bytes` of working memory, more than the budget can ever give one job:
    /// `largest` bytes (its `capacity` less what the caches may keep).
    case neverFits(what: String, bytes: Int, largest: Int, capacity: Int)
    /// `waiting` jobs wait for memory already, the most the budget queues (`limit`).
    case queueFull(waiting: Int, limit: Int)

    public var description: String {
        switch self {
        case .neverFits(let what, let bytes, let largest, let capacity):
            return "\(what) needs about \(Self.megabytes(bytes)) of working memory, more than the memory budget "
                + "of \(Self.megabytes(capacity)) can ever give one job (\(Self.megabytes(largest)) once the caches' share is set aside)"
        case .queueFull(let waiting, let limit):
            return "the memory budget's queue is full: \(waiting) jobs wait already (limit \(limit))"
        }
    }

    /// `bytes` in megabytes (MiB) with one decimal under 10.
    static func megabytes(_ bytes: Int) -> String {
        let value = Double(bytes) / 1_048_576
        return value < 10 ? String(cFormat: "%.1f MiB", value) : "\(Int(value.rounded())) MiB"
    }
}
