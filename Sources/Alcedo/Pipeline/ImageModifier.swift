/// Changes the image handed to the caller, after the caches: the change is never stored.
///
/// Use it for what belongs to one display and not to the cached variant (a different
/// processor would change the cache key instead). It runs on every delivery, memory hits included.
public protocol ImageModifier: Sendable {
    /// The image to deliver instead of `image`.
    func modify(_ image: AlcedoImage) -> AlcedoImage
}

/// An image modifier made from a closure.
public struct AnyImageModifier: ImageModifier {
    private let block: @Sendable (AlcedoImage) -> AlcedoImage

    /// A modifier that runs `modify`.
    public init(modify: @escaping @Sendable (AlcedoImage) -> AlcedoImage) {
        block = modify
    }

    public func modify(_ image: AlcedoImage) -> AlcedoImage { block(image) }
}
