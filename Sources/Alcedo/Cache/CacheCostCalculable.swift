/// A value that knows how much memory it takes, for the cost limit of ``MemoryStorage``.
public protocol CacheCostCalculable {
    /// The memory the value takes, in bytes.
    var cacheCost: Int { get }
}

extension AlcedoImage: CacheCostCalculable {
    /// The decoded pixels of all frames, in bytes (``AlcedoImage/costInBytes``).
    public var cacheCost: Int { costInBytes }
}
