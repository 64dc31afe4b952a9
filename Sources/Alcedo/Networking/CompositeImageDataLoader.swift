#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Several loaders behind one ``ImageDownloader``: each request goes to the first loader
/// whose ``ImageDataLoading/supportedSchemes`` has the URL's scheme.
///
/// ```swift
/// let loader = CompositeImageDataLoader([
///     HTTPImageLoader(),
///     S3ImageDataLoader(configuration: S3Configuration(region: "eu-west-1")),
///     LocalFolderImageDataLoader(root: URL(fileURLWithPath: "/srv/images")),
/// ])
/// let manager = ImageManager(downloader: ImageDownloader(name: "images", loader: loader))
/// // manager.retrieveImage(with: URL(string: "s3://bucket/photo.jpg")!)
/// ```
///
/// The caches, coalescing, limits, retries and revalidation of the downloader apply to every
/// scheme alike. A redirect is followed only to an `http` or `https` URL.
public final class CompositeImageDataLoader: ImageDataLoading {
    /// The loaders, in the order they are asked.
    public let loaders: [any ImageDataLoading]

    /// Creates a loader that routes by scheme to `loaders` (the first that reads a scheme wins).
    public init(_ loaders: [any ImageDataLoading]) {
        self.loaders = loaders
    }

    public var supportedSchemes: Set<String> {
        loaders.reduce(into: Set<String>()) { $0.formUnion($1.supportedSchemes) }
    }

    public func load(_ request: DownloadRequest) async throws -> ImageDataLoaderResponse {
        let scheme = request.url.scheme?.lowercased() ?? ""
        guard let loader = loaders.first(where: { $0.supportedSchemes.contains(scheme) }) else {
            throw AlcedoError.requestError(reason: .invalidURL(request.url.absoluteString))
        }
        return try await loader.load(request)
    }

    public func shutdown() async {
        for loader in loaders { await loader.shutdown() }
    }
}
