#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What ``ImageManager/retrieveLivePhoto(with:options:)`` gives (Kingfisher's
/// `LivePhotoLoadingInfoResult`): the disk files of a Live Photo's resources, each named with the
/// extension of its type, ready for whatever assembles or serves them.
public struct LivePhotoLoadingInfoResult: Sendable {
    /// The file of each resource, in the order of ``source``'s resources.
    public let fileURLs: [URL]
    /// `.disk` when every file was in the disk cache already; `.none` when one at least was
    /// loaded now.
    public let cacheType: CacheType
    /// The source loaded.
    public let source: LivePhotoSource
    /// The source asked for (the same as ``source``: a Live Photo has no alternative sources).
    public let originalSource: LivePhotoSource
    /// The bytes of the resources loaded now, in the order of ``source``'s resources (none of
    /// those found on disk).
    public let data: @Sendable () -> [Data]

    /// Creates a result (the manager makes its own).
    public init(fileURLs: [URL], cacheType: CacheType, source: LivePhotoSource, originalSource: LivePhotoSource,
                data: @escaping @Sendable () -> [Data]) {
        self.fileURLs = fileURLs
        self.cacheType = cacheType
        self.source = source
        self.originalSource = originalSource
        self.data = data
    }
}

/// Kingfisher's Live Photo loading: the files of a Live Photo (a HEIC still and a QuickTime
/// video) downloaded once into the disk cache, each under the extension of its type, as
/// Apple's Photos framework wants them. Assembling the Live Photo is Photos' work, which Linux
/// does not have: these calls stop at the files.
extension ImageManager {
    /// Loads the files of `source` into the disk cache (those not there yet, or all of them with
    /// ``AlcedoOptionsInfoItem/forceRefresh``) and returns their file URLs, as Kingfisher's
    /// `retrieveLivePhoto(with:options:)` does.
    ///
    /// A file is stored under the resource's cache key and ``LivePhotoImageProcessor``'s
    /// identifier, with the extension of its type (``LivePhotoResource/referenceFileType``; for
    /// a type not known, the one its bytes' signature names: `heic` or `mov`), in the target
    /// cache of `options`. Files are loaded concurrently: a network resource with the
    /// downloader of `options` (``ImageDownloader/downloadLivePhotoResource(with:options:)``:
    /// its bytes are not checked to be an image), a data provider's with its ``ImageDataProvider/data()``.
    /// A processor in `options` is not applied: a Live Photo's files are kept as loaded.
    /// Differences from Kingfisher: no `progressBlock:` or `referenceTaskIdentifierChecker:`
    /// (Kingfisher ignores the progress of these loads as well).
    /// - Parameters:
    ///   - source: the Live Photo's resources.
    ///   - options: the request's options (default `nil`: the manager's ``defaultOptions``).
    /// - Throws: the first load or disk error; `.cacheError(.missingLivePhotoResourceOnDisk)` for
    ///   a resource whose file is not found on disk after the loads (a type not known whose bytes
    ///   are neither HEIC nor QuickTime is stored without an extension, and not found as a Live
    ///   Photo file).
    public func retrieveLivePhoto(with source: LivePhotoSource,
                                  options: AlcedoOptionsInfo? = nil) async throws(AlcedoError) -> LivePhotoLoadingInfoResult {
        var parsed = parsedOptions(options)
        parsed.processor = LivePhotoImageProcessor.default
        let missing = missingResources(source, options: parsed)
        let loaded = try await downloadAndCache(resources: missing, options: parsed)
        let cache = parsed.targetCache ?? self.cache
        var fileURLs: [URL] = []
        for resource in source.resources {
            guard let url = cache.possibleCacheFileURLIfOnDisk(forKey: resource.cacheKey,
                                                               processorIdentifier: parsed.processor.identifier,
                                                               referenceFileType: resource.referenceFileType) else {
                throw .cacheError(reason: .missingLivePhotoResourceOnDisk(resource))
            }
            fileURLs.append(url)
        }
        let data = loaded.map(\.originalData)
        return LivePhotoLoadingInfoResult(fileURLs: fileURLs, cacheType: missing.isEmpty ? .disk : .none, source: source,
                                          originalSource: source, data: { data })
    }

    /// The resources of `source` whose file is not in the target cache of `options` under the
    /// options' processor identifier (Kingfisher's internal `missingResources(_:options:)`);
    /// all of them with ``AlcedoParsedOptionsInfo/forceRefresh``.
    func missingResources(_ source: LivePhotoSource, options: AlcedoParsedOptionsInfo) -> [LivePhotoResource] {
        guard !options.forceRefresh else { return source.resources }
        let cache = options.targetCache ?? self.cache
        return source.resources.filter { resource in
            cache.possibleCacheFileURLIfOnDisk(forKey: resource.cacheKey, processorIdentifier: options.processor.identifier,
                                               referenceFileType: resource.referenceFileType) == nil
        }
    }

    /// Loads `resources` concurrently and stores each on disk in the target cache of `options`,
    /// under the options' processor identifier and disk expiration, with the extension of its type
    /// (Kingfisher's internal `downloadAndCache(resources:options:)`). Returns the loads in the
    /// order of `resources`; the first failure cancels the others and is thrown.
    func downloadAndCache(resources: [LivePhotoResource],
                          options: AlcedoParsedOptionsInfo) async throws(AlcedoError) -> [LivePhotoResourceDownloadingResult] {
        guard !resources.isEmpty else { return [] }
        let downloader = options.downloader ?? self.downloader
        let cache = options.targetCache ?? self.cache
        typealias Outcome = (index: Int, result: Result<LivePhotoResourceDownloadingResult, AlcedoError>)
        let outcomes = await withTaskGroup(of: Outcome.self) { group -> [Outcome] in
            for (index, resource) in resources.enumerated() {
                group.addTask {
                    do throws(AlcedoError) {
                        let loaded = try await Self.load(resource, with: downloader, options: options)
                        try await cache.storeToDisk(
                            loaded.originalData, forKey: resource.cacheKey, processorIdentifier: options.processor.identifier,
                            forcedExtension: resource.referenceFileType.determinedFileExtension(loaded.originalData),
                            expiration: options.diskCacheExpiration)
                        return (index, .success(loaded))
                    } catch {
                        return (index, .failure(error))
                    }
                }
            }
            var outcomes: [Outcome] = []
            for await outcome in group {
                outcomes.append(outcome)
                if case .failure = outcome.result { group.cancelAll() }
            }
            return outcomes
        }
        var loaded = [LivePhotoResourceDownloadingResult?](repeating: nil, count: resources.count)
        for outcome in outcomes {
            switch outcome.result {
            case .success(let value): loaded[outcome.index] = value
            case .failure(let error): throw error
            }
        }
        return loaded.compactMap { $0 }
    }

    /// The bytes of one resource: downloaded, or read from its data provider.
    private static func load(_ resource: LivePhotoResource, with downloader: ImageDownloader,
                             options: AlcedoParsedOptionsInfo) async throws(AlcedoError) -> LivePhotoResourceDownloadingResult {
        switch resource.source {
        case .network(let network):
            return try await downloader.downloadLivePhotoResource(with: network.downloadURL, options: options)
        case .provider(let provider):
            return LivePhotoResourceDownloadingResult(originalData: try await provider.loadedData(), url: provider.contentURL)
        }
    }
}
