#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Kingfisher's `kf` namespace: `target.kf.setImage(with: url)` on anything that is
/// ``ImageDisplaying``, so that the image-view calls of Kingfisher's documentation compile
/// unchanged with a target of yours in place of a `UIImageView`.
///
/// ```swift
/// final class Avatar: ImageDisplaying { … }
/// avatar.kf.setImage(with: url, options: [.processor(RoundCornerImageProcessor(cornerRadius: 20))]) { result in … }
/// avatar.kf.cancelDownloadTask()
/// ```
///
/// Each call is the target's own (``ImageDisplaying/setImage(with:placeholder:options:manager:progressBlock:completionHandler:)-(Source?,_,_,_,_,_)``,
/// ``ImageDisplaying/cancelImageDownloadTask()``), with the same semantics.
public struct KingfisherWrapper<Base>: Sendable where Base: Sendable {
    /// The wrapped value.
    public let base: Base

    /// Wraps `base`.
    public init(_ base: Base) {
        self.base = base
    }
}

extension ImageDisplaying {
    /// Kingfisher's namespace for the binding calls (see ``KingfisherWrapper``).
    public var kf: KingfisherWrapper<Self> { KingfisherWrapper(self) }
}

extension KingfisherWrapper where Base: ImageDisplaying {
    /// Binds the target to `source` (Kingfisher's `kf.setImage(with:placeholder:options:progressBlock:completionHandler:)`):
    /// shows `placeholder` (default `nil`), loads with `options` (default `nil`), shows the
    /// image, then calls `completionHandler` (default `nil`) once.
    /// - Returns: the request's task, or `nil` when it finished at once (memory hit, no source).
    @discardableResult
    public func setImage(with source: Source?, placeholder: AlcedoImage? = nil, options: AlcedoOptionsInfo? = nil,
                         progressBlock: DownloadProgressBlock? = nil,
                         completionHandler: (@Sendable (Result<RetrieveImageResult, AlcedoError>) -> Void)? = nil) -> RetrieveImageTask? {
        base.setImage(with: source, placeholder: placeholder, options: options, progressBlock: progressBlock,
                      completionHandler: completionHandler)
    }

    /// The form without a progress block, so that a trailing closure is the completion
    /// handler (as in Kingfisher): `kf.setImage(with: source) { result in … }`.
    @discardableResult
    public func setImage(with source: Source?, placeholder: AlcedoImage? = nil, options: AlcedoOptionsInfo? = nil,
                         completionHandler: (@Sendable (Result<RetrieveImageResult, AlcedoError>) -> Void)? = nil) -> RetrieveImageTask? {
        base.setImage(with: source, placeholder: placeholder, options: options, progressBlock: nil,
                      completionHandler: completionHandler)
    }

    /// Binds the target to a resource (a `URL` is one); see the ``Source`` form.
    @discardableResult
    public func setImage(with resource: (any Resource)?, placeholder: AlcedoImage? = nil, options: AlcedoOptionsInfo? = nil,
                         progressBlock: DownloadProgressBlock? = nil,
                         completionHandler: (@Sendable (Result<RetrieveImageResult, AlcedoError>) -> Void)? = nil) -> RetrieveImageTask? {
        base.setImage(with: resource, placeholder: placeholder, options: options, progressBlock: progressBlock,
                      completionHandler: completionHandler)
    }

    /// The form without a progress block, so that a trailing closure is the completion
    /// handler (as in Kingfisher): `kf.setImage(with: resource) { result in … }`.
    @discardableResult
    public func setImage(with resource: (any Resource)?, placeholder: AlcedoImage? = nil, options: AlcedoOptionsInfo? = nil,
                         completionHandler: (@Sendable (Result<RetrieveImageResult, AlcedoError>) -> Void)? = nil) -> RetrieveImageTask? {
        base.setImage(with: resource, placeholder: placeholder, options: options, progressBlock: nil,
                      completionHandler: completionHandler)
    }

    /// Binds the target to a data provider; see the ``Source`` form.
    @discardableResult
    public func setImage(with provider: (any ImageDataProvider)?, placeholder: AlcedoImage? = nil, options: AlcedoOptionsInfo? = nil,
                         progressBlock: DownloadProgressBlock? = nil,
                         completionHandler: (@Sendable (Result<RetrieveImageResult, AlcedoError>) -> Void)? = nil) -> RetrieveImageTask? {
        base.setImage(with: provider, placeholder: placeholder, options: options, progressBlock: progressBlock,
                      completionHandler: completionHandler)
    }

    /// The form without a progress block, so that a trailing closure is the completion
    /// handler (as in Kingfisher): `kf.setImage(with: provider) { result in … }`.
    @discardableResult
    public func setImage(with provider: (any ImageDataProvider)?, placeholder: AlcedoImage? = nil, options: AlcedoOptionsInfo? = nil,
                         completionHandler: (@Sendable (Result<RetrieveImageResult, AlcedoError>) -> Void)? = nil) -> RetrieveImageTask? {
        base.setImage(with: provider, placeholder: placeholder, options: options, progressBlock: nil,
                      completionHandler: completionHandler)
    }

    /// Cancels the target's current request (Kingfisher's `kf.cancelDownloadTask()`): its
    /// completion handler gets ``RequestErrorReason/cancelled`` and the target keeps what it shows.
    public func cancelDownloadTask() {
        base.cancelImageDownloadTask()
    }
}
