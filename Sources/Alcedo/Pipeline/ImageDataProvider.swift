#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Gives the pipeline the bytes of an image that does not come from the network: a local
/// file, a base64 string, bytes already in memory, or anything of your own.
///
/// The bytes are decoded, processed and cached like downloaded ones, under ``cacheKey``.
/// Loading is coalesced: while one load of a key is in flight, other requests for the same
/// key and processor wait for it instead of calling ``data()`` again.
public protocol ImageDataProvider: Sendable {
    /// The key the image is cached under; two providers with the same key must give the same image.
    var cacheKey: String { get }

    /// The encoded image bytes (Kingfisher's shape: any error). An ``AlcedoError`` reaches the
    /// caller as it is, a `CancellationError` as ``RequestErrorReason/dataProviderCancelled(provider:)``,
    /// any other error as ``ImageSettingErrorReason/dataProviderError(provider:error:)``. The
    /// task running it is cancelled when every caller waiting for it has cancelled. Blocking
    /// work belongs on a thread of your own, not on the cooperative pool.
    func data() async throws -> Data

    /// Kingfisher's callback shape of ``data()``: calls `handler` once with the bytes or the
    /// error, from any thread.
    ///
    /// Implement this or ``data()``; each has a default that calls the other, so a provider
    /// must implement at least one. An error that is not an ``AlcedoError`` reaches the caller
    /// as ``ImageSettingErrorReason/dataProviderError(provider:error:)``.
    func data(handler: @escaping @Sendable (Result<Data, any Error>) -> Void)

    /// A URL that shows where the data comes from, for messages (default `nil`).
    var contentURL: URL? { get }
}

extension ImageDataProvider {
    public var contentURL: URL? { nil }

    /// Runs ``data()`` in a task and gives its result to `handler`.
    public func data(handler: @escaping @Sendable (Result<Data, any Error>) -> Void) {
        Task {
            do {
                handler(.success(try await data()))
            } catch {
                handler(.failure(error))
            }
        }
    }

    /// Waits for ``data(handler:)``.
    public func data() async throws -> Data {
        // A handler called more than once counts once.
        let result = await firstCallbackValue { (handler: @escaping @Sendable (Result<Data, any Error>) -> Void) in
            data(handler: handler)
        }
        switch result {
        case .success(let data): return data
        case .failure(let error as AlcedoError): throw error
        case .failure(let error):
            throw AlcedoError.imageSettingError(reason: .dataProviderError(provider: self, error: error))
        }
    }
}
