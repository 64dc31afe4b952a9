#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where an image comes from: the network (a ``Resource``) or an ``ImageDataProvider``
/// (a local file, a base64 string, bytes in memory, your own).
public enum Source: Sendable, CustomStringConvertible {
    /// Downloaded from ``Resource/downloadURL`` by the ``ImageDownloader``.
    case network(any Resource)
    /// Read from a data provider.
    case provider(any ImageDataProvider)

    /// The key the image is cached under.
    public var cacheKey: String {
        switch self {
        case .network(let resource): return resource.cacheKey
        case .provider(let provider): return provider.cacheKey
        }
    }

    /// The download URL of a network source, or the provider's ``ImageDataProvider/contentURL``.
    public var url: URL? {
        switch self {
        case .network(let resource): return resource.downloadURL
        case .provider(let provider): return provider.contentURL
        }
    }

    /// The resource of a network source, else `nil`.
    public var asResource: (any Resource)? {
        if case .network(let resource) = self { return resource }
        return nil
    }

    /// The provider of a provider source, else `nil`.
    public var asProvider: (any ImageDataProvider)? {
        if case .provider(let provider) = self { return provider }
        return nil
    }

    public var description: String {
        switch self {
        case .network(let resource):
            let url = resource.downloadURL.absoluteString
            return resource.cacheKey == url ? url : "\(url) (key \(resource.cacheKey))"
        case .provider(let provider):
            return "\(type(of: provider))(\(provider.cacheKey))"
        }
    }
}
