#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Kingfisher's Live Photo names, so that the error reasons that mention them keep Kingfisher's
// case sets (an exhaustive `switch` over them compiles). A Live Photo is a still image and a
// video that Apple's Photos framework pairs; there is no such framework on Linux, so Alcedo
// keeps only the values and never reports the Live Photo reasons.

/// One file of a Live Photo (Kingfisher's `LivePhotoResource`): where it comes from and what
/// it is. Alcedo loads no Live Photos; the value is kept for the error reasons that name it.
public struct LivePhotoResource: Sendable, CustomStringConvertible {
    /// What a resource of a Live Photo is.
    public enum FileType: Sendable, Hashable {
        /// The still image (HEIC).
        case heic
        /// The video (QuickTime).
        case mov
        /// Not known from the URL.
        case other(String)
    }

    /// Where the resource is loaded from.
    public let source: Source
    /// What it is (default `.other("")`).
    public let referenceFileType: FileType

    /// Creates a resource at `source` of `fileType` (default `.other("")`).
    public init(source: Source, fileType: FileType = .other("")) {
        self.source = source
        self.referenceFileType = fileType
    }

    public var description: String { "\(source)" }
}

/// The files of a Live Photo (Kingfisher's `LivePhotoSource`).
public struct LivePhotoSource: Sendable, CustomStringConvertible {
    /// The resources, usually a still image and a video.
    public let resources: [LivePhotoResource]

    /// Creates a source of `resources`.
    public init(resources: [LivePhotoResource]) {
        self.resources = resources
    }

    public var description: String { resources.map(\.description).joined(separator: " + ") }
}

/// The result of loading a Live Photo (Kingfisher's `RetrieveLivePhotoResult`): the bytes of
/// each resource. Alcedo loads no Live Photos.
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
