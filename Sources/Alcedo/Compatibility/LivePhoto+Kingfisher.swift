#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Kingfisher's Live Photo names. A Live Photo is a still image and a video that Apple's Photos
// framework pairs; there is no such framework on Linux. Alcedo loads and caches the files
// (`ImageManager.retrieveLivePhoto(with:options:)`); pairing them is Photos' work.

/// One file of a Live Photo (Kingfisher's `LivePhotoResource`): where it comes from and what
/// it is. Alcedo has no Photos framework to assemble a Live Photo; the value names a file for the
/// error reasons, for ``ImageDownloader/downloadLivePhotoResource(with:options:)`` and for the
/// disk cache, where such a file is kept under its own extension
/// (``ImageCache/possibleCacheFileURLIfOnDisk(forKey:processorIdentifier:referenceFileType:)``).
public struct LivePhotoResource: Sendable, CustomStringConvertible {
    /// What a resource of a Live Photo is.
    public enum FileType: Sendable, Hashable {
        /// The still image (HEIC).
        case heic
        /// The video (QuickTime).
        case mov
        /// Another type, by its file extension; `""` when not known.
        case other(String)

        /// The file extension of the type: `heic`, `mov`, or the one `.other` holds.
        public var fileExtension: String {
            switch self {
            case .heic: return "heic"
            case .mov: return "mov"
            case .other(let ext): return ext
            }
        }

        /// The extension a file of this type is stored with: `heic` or `mov`, the extension
        /// `.other` holds, and for `.other("")` (not known) the one `data`'s signature names
        /// (``guessedFileExtension(from:)``), else `nil`.
        func determinedFileExtension(_ data: Data) -> String? {
            switch self {
            case .heic, .mov: return fileExtension
            case .other(let ext): return ext.isEmpty ? Self.guessedFileExtension(from: data) : ext
            }
        }

        /// The extension the start of `data` names: HEIF and QuickTime files are ISO base media
        /// files, which open with an `ftyp` box whose major brand says the format: `heic` (or
        /// `heix`) for a HEIC still, `qt  ` for a QuickTime movie. `nil` for anything else.
        static func guessedFileExtension(from data: Data) -> String? {
            guard data.count >= 12 else { return nil }
            let head = [UInt8](data.prefix(12))
            guard head[4..<8].elementsEqual("ftyp".utf8) else { return nil }
            switch String(decoding: head[8..<12], as: UTF8.self) {
            case "heic", "heix": return "heic"
            case "qt  ": return "mov"
            default: return nil
            }
        }

        /// The type a URL's path extension names (compared without case): `.heic`, `.mov`,
        /// else `.other` with the extension (`""` for none).
        init(guessingFrom url: URL) {
            let ext = url.pathExtension.lowercased()
            switch ext {
            case "heic": self = .heic
            case "mov": self = .mov
            default: self = .other(ext)
            }
        }
    }

    /// Where the resource is loaded from.
    public let source: Source
    /// What it is: as given, else guessed from the URL's extension.
    public let referenceFileType: FileType

    /// Creates a resource at `source` of `fileType`; `nil` (default) guesses it from the
    /// source's URL extension (`.other("")` when the source has no URL).
    public init(source: Source, fileType: FileType? = nil) {
        self.source = source
        self.referenceFileType = fileType ?? source.url.map(FileType.init(guessingFrom:)) ?? .other("")
    }

    /// Creates a resource downloaded from `downloadURL`, cached under `cacheKey` (default `nil`:
    /// the URL's cache key), of `fileType` (default `nil`: guessed from the URL's extension).
    public init(downloadURL: URL, cacheKey: String? = nil, fileType: FileType? = nil) {
        self.init(source: .network(ImageResource(downloadURL: downloadURL, cacheKey: cacheKey)), fileType: fileType)
    }

    /// Creates a resource downloaded from `resource`, of `fileType` (default `nil`: guessed from
    /// its download URL's extension).
    public init(resource: any Resource, fileType: FileType? = nil) {
        self.init(source: .network(resource), fileType: fileType)
    }

    /// The source, by Kingfisher's name.
    public var dataSource: Source { source }
    /// The key the file is cached under: the source's.
    public var cacheKey: String { source.cacheKey }
    /// The URL it is downloaded from, or the provider's content URL.
    public var downloadURL: URL? { source.url }

    public var description: String { "\(source)" }
}

/// The files of a Live Photo (Kingfisher's `LivePhotoSource`).
public struct LivePhotoSource: Sendable, CustomStringConvertible {
    /// The resources, usually a still image and a video.
    public let resources: [LivePhotoResource]

    /// Creates a source of the files `resources`, each of the type its URL's extension names.
    public init(resources: [any Resource]) {
        self.init(resources.map { LivePhotoResource(resource: $0) })
    }

    /// Creates a source of the files at `urls`, each of the type its extension names.
    public init(urls: [URL]) {
        self.init(urls.map { LivePhotoResource(downloadURL: $0) })
    }

    /// Creates a source of `resources`.
    public init(_ resources: [LivePhotoResource]) {
        self.resources = resources
    }

    public var description: String { resources.map(\.description).joined(separator: " + ") }
}

/// The result of loading a Live Photo (Kingfisher's `RetrieveLivePhotoResult`): the bytes of
/// each resource. Kept for Kingfisher's error reasons; Alcedo's loads give a
/// ``LivePhotoLoadingInfoResult``.
public struct RetrieveLivePhotoResult: Sendable {
    /// The bytes of each resource, in the order of ``source``'s resources.
    public let fileData: [Data]
    /// The source loaded.
    public let source: LivePhotoSource

    /// Creates a result.
    public init(fileData: [Data], source: LivePhotoSource) {
        self.fileData = fileData
        self.source = source
    }
}

/// The processor whose identifier keeps the files of Live Photos apart, in a cache, from images
/// loaded from the same URLs (Kingfisher's internal `LivePhotoImageProcessor`): a Live Photo
/// file is cached under `key@identifier`. It leaves an image as it is.
struct LivePhotoImageProcessor: ImageProcessor {
    /// The one processor.
    static let `default` = LivePhotoImageProcessor()

    private init() {}

    let identifier = ProcessorSupport.identifier("livephoto")

    /// `image`, unchanged: a Live Photo's files are kept as loaded.
    func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage { image }
}

extension ImageCache {
    /// The URL of the disk file of a Live Photo resource cached under `key`, or `nil` when
    /// none is on disk (Kingfisher's `possibleCacheFileURLIfOnDisk`, internal there). The file's
    /// extension is the one the type names: `heic` or `mov`, or the extension `.other` holds; for
    /// `.other("")` (not known), a `heic` file, then a `mov` file, is looked for.
    /// - Parameters:
    ///   - key: the resource's cache key.
    ///   - identifier: the processor's identifier the file was stored with.
    ///   - referenceFileType: the type of the resource.
    public func possibleCacheFileURLIfOnDisk(forKey key: String, processorIdentifier identifier: String,
                                             referenceFileType: LivePhotoResource.FileType) -> URL? {
        let extensions: [String]
        switch referenceFileType {
        case .heic, .mov: extensions = [referenceFileType.fileExtension]
        case .other(let ext): extensions = ext.isEmpty ? ["heic", "mov"] : [ext]
        }
        for ext in extensions {
            if let url = cacheFileURLIfOnDisk(forKey: key, processorIdentifier: identifier, forcedExtension: ext) {
                return url
            }
        }
        return nil
    }
}
