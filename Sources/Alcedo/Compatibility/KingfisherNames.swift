#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Kingfisher's public type names, beside Alcedo's own, so that code written for Kingfisher
// compiles against Alcedo unchanged. A package that builds for Apple platforms with Kingfisher
// and for Linux with Alcedo writes its imports once:
//
// ```swift
// #if canImport(Kingfisher)
// import Kingfisher
// #else
// import Alcedo
// #endif
// ```
//
// and shares the rest of the file. Each name here is a type alias: the Alcedo type *is* the
// Kingfisher one, so values pass between code written in either vocabulary without
// conversion. See the "Coming from Kingfisher" article for the names whose shapes differ.

/// Kingfisher's manager: ``ImageManager`` (`KingfisherManager.shared` is ``ImageManager/shared``).
public typealias KingfisherManager = ImageManager

/// Kingfisher's error: ``AlcedoError``, with Kingfisher's five cases (`requestError`,
/// `responseError`, `cacheError`, `processorError`, `imageSettingError`).
public typealias KingfisherError = AlcedoError

/// Kingfisher's options list: ``AlcedoOptionsInfo``.
public typealias KingfisherOptionsInfo = AlcedoOptionsInfo

/// Kingfisher's option: ``AlcedoOptionsInfoItem``.
public typealias KingfisherOptionsInfoItem = AlcedoOptionsInfoItem

/// Kingfisher's parsed options: ``AlcedoParsedOptionsInfo``.
public typealias KingfisherParsedOptionsInfo = AlcedoParsedOptionsInfo

/// Kingfisher's platform image (`UIImage`, `NSImage`): ``AlcedoImage``, RGBA pixels with frames.
public typealias KFCrossPlatformImage = AlcedoImage

/// Kingfisher's platform colour (`UIColor`, `NSColor`): ``AlcedoColor``.
public typealias KFCrossPlatformColor = AlcedoColor

/// Kingfisher's name for where callbacks run: ``CallbackQueue``.
public typealias ExecutionQueue = CallbackQueue

/// Kingfisher's top-level names of the prefetcher's blocks.
public typealias PrefetcherProgressBlock = ImagePrefetcher.PrefetcherProgressBlock
/// Kingfisher's top-level names of the prefetcher's blocks.
public typealias PrefetcherCompletionHandler = ImagePrefetcher.PrefetcherCompletionHandler
/// Kingfisher's top-level names of the prefetcher's blocks.
public typealias PrefetcherSourceProgressBlock = ImagePrefetcher.PrefetcherSourceProgressBlock
/// Kingfisher's top-level names of the prefetcher's blocks.
public typealias PrefetcherSourceCompletionHandler = ImagePrefetcher.PrefetcherSourceCompletionHandler

extension Array where Element == AlcedoOptionsInfoItem {
    /// No options (Kingfisher's `KingfisherOptionsInfo.empty`): every option at its default.
    public static var empty: AlcedoOptionsInfo { [] }
}
