import Foundation

/// Gives the pipeline the bytes of an image that does not come from the network: a local
/// file, a base64 string, bytes already in memory, or anything of your own.
///
/// The bytes are decoded, processed and cached like downloaded ones, under ``cacheKey``.
/// Loading is coalesced: while one load of a key is in flight, other requests for the same
/// key and processor wait for it instead of calling ``data()`` again.
public protocol ImageDataProvider: Sendable {
    /// The key the image is cached under; two providers with the same key must give the same image.
    var cacheKey: String { get }

    /// The encoded image bytes. Failures should be ``AlcedoError/imageSettingError(reason:)``
    /// (for example ``ImageSettingErrorReason/dataProviderError(cacheKey:message:)``). Blocking
    /// work belongs on a thread of your own, not on the cooperative pool.
    func data() async throws(AlcedoError) -> Data

    /// A URL that shows where the data comes from, for messages (default `nil`).
    var contentURL: URL? { get }
}

extension ImageDataProvider {
    public var contentURL: URL? { nil }
}
