#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// Anything that shows an image and can be bound to a source, Kingfisher-style, with no UI
/// toolkit: a view model, a widget of your toolkit, a test double.
///
/// ```swift
/// final class AvatarModel: ImageDisplaying {
///     let imageBinding = ImageBinding()
///     private let shown = Mutex<AlcedoImage?>(nil)
///     func display(_ image: AlcedoImage?) { shown.withLock { $0 = image } }
/// }
/// model.setImage(with: url, placeholder: grey, options: [.onFailureImage(broken)])
/// ```
///
/// Semantics, as Kingfisher's image views:
/// - the placeholder is shown while loading (unless
///   ``AlcedoOptionsInfoItem/keepCurrentImageWhileLoading``), then with
///   ``AlcedoOptionsInfoItem/progressiveJPEG(_:)`` the previews of a progressive JPEG as it
///   downloads (never after the final image), the image on success, the
///   ``AlcedoOptionsInfoItem/onFailureImage(_:)`` (if given) on failure — not on cancellation;
/// - an image already in the memory cache is shown at once, before `setImage` returns;
/// - the latest request wins: a result of a superseded request is never shown, and its
///   completion handler gets ``ImageSettingErrorReason/notCurrentSourceTask(result:error:source:)``;
///   its download (and caching) go on, as Kingfisher's do — ``cancelImageDownloadTask()``
///   (`kf.cancelDownloadTask()`) stops it, and its handler then gets the cancellation.
public protocol ImageDisplaying: AnyObject, Sendable {
    /// This target's binding state; give each target its own ``ImageBinding``.
    var imageBinding: ImageBinding { get }

    /// Shows `image` (`nil`: show nothing). Called by the binding, never concurrently for one
    /// target, on the request's callback queue (or the caller's thread for the placeholder and
    /// memory hits). It must not call `setImage` on the same target synchronously.
    func display(_ image: AlcedoImage?)
}

extension ImageDisplaying {
    /// Binds the target to `source`: shows `placeholder`, loads, shows the image.
    /// - Parameters:
    ///   - source: what to load; `nil` shows the placeholder and fails with
    ///     ``ImageSettingErrorReason/emptySource``.
    ///   - placeholder: shown while loading (default `nil`: the target is cleared).
    ///   - options: the request's options (default `nil`).
    ///   - manager: the manager (default ``ImageManager/shared``).
    ///   - progressBlock: download progress of this request while it is current.
    ///   - completionHandler: called exactly once, on the options' callback queue (a trailing
    ///     closure goes here; the form without it omits the parameter).
    /// - Returns: the request's task, or `nil` when it finished at once (memory hit, no source).
    @discardableResult
    public func setImage(with source: Source?, placeholder: AlcedoImage? = nil, options: AlcedoOptionsInfo? = nil,
                         manager: ImageManager = .shared, progressBlock: DownloadProgressBlock? = nil,
                         completionHandler: (@Sendable (Result<RetrieveImageResult, AlcedoError>) -> Void)?) -> RetrieveImageTask? {
        setImage(with: source, placeholder: placeholder, options: options, manager: manager, progressBlock: progressBlock,
                 previewHandler: nil, completionHandler: completionHandler)
    }

    /// The ``Source`` form, with `previewHandler` called after each preview the target showed.
    func setImage(with source: Source?, placeholder: AlcedoImage?, options: AlcedoOptionsInfo?, manager: ImageManager,
                  progressBlock: DownloadProgressBlock?, previewHandler: (@Sendable (AlcedoImage) -> Void)?,
                  completionHandler: (@Sendable (Result<RetrieveImageResult, AlcedoError>) -> Void)?) -> RetrieveImageTask? {
        let parsed = manager.parsedOptions(options)
        let binding = imageBinding
        guard let source else {
            _ = binding.begin(nil, showing: .some(placeholder), on: self)
            if let completionHandler {
                parsed.callbackQueue.execute { completionHandler(.failure(.imageSettingError(reason: .emptySource))) }
            }
            return nil
        }
        if let hit = manager.memoryCachedResult(for: source, options: parsed) {
            let generation = binding.begin(source, showing: nil, on: self)
            let shown = binding.finish(generation, showing: .some(hit.image), on: self)
            if let completionHandler {
                let result: Result<RetrieveImageResult, AlcedoError> = shown ? .success(hit)
                    : .failure(.imageSettingError(reason: .notCurrentSourceTask(result: hit, error: nil, source: source)))
                parsed.callbackQueue.execute { completionHandler(result) }
            }
            return nil
        }
        let generation = binding.begin(source, showing: parsed.keepCurrentImageWhileLoading ? nil : .some(placeholder), on: self)
        let finished = Mutex(false)
        var currentProgress: DownloadProgressBlock?
        if let progressBlock {
            currentProgress = { received, total in
                if binding.isCurrent(generation) { progressBlock(received, total) }
            }
        }
        let completion: @Sendable (Result<RetrieveImageResult, AlcedoError>) -> Void = { [weak self] result in
            finished.withLock { $0 = true }
            guard let self else {
                completionHandler?(result)
                return
            }
            let shown: AlcedoImage??
            switch result {
            case .success(let value): shown = .some(value.image)
            case .failure(let error): shown = error.isCancellation ? nil : parsed.onFailureImage
            }
            if binding.finish(generation, showing: shown, on: self) {
                completionHandler?(result)
            } else if case .failure(let error) = result, error.isCancellation, binding.wasCancelled(generation) {
                // Cancelled by `cancelImageDownloadTask()`, then superseded: the cancellation.
                completionHandler?(result)
            } else {
                let superseded = ImageSettingErrorReason.notCurrentSourceTask(
                    result: try? result.get(), error: result.failureValue, source: source)
                completionHandler?(.failure(.imageSettingError(reason: superseded)))
            }
        }
        let preview: @Sendable (AlcedoImage) -> Void = { [weak self] image in
            if let self, binding.showPreview(generation, image: image, on: self) { previewHandler?(image) }
        }
        let task = manager.retrieveImage(with: source, options: options, progressBlock: currentProgress,
                                         previewHandler: preview, completionHandler: completion)
        binding.attach(task, generation: generation, finished: finished.withLock { $0 })
        return task
    }

    /// Binds the target to a resource (a `URL` is a resource; a `file://` URL needs ``AlcedoOptionsInfoItem/allowLocalFiles``).
    @discardableResult
    public func setImage(with resource: (any Resource)?, placeholder: AlcedoImage? = nil, options: AlcedoOptionsInfo? = nil,
                         manager: ImageManager = .shared, progressBlock: DownloadProgressBlock? = nil,
                         completionHandler: (@Sendable (Result<RetrieveImageResult, AlcedoError>) -> Void)?) -> RetrieveImageTask? {
        setImage(with: resource?.convertToSource(), placeholder: placeholder, options: options, manager: manager,
                 progressBlock: progressBlock, completionHandler: completionHandler)
    }

    /// Binds the target to a data provider.
    @discardableResult
    public func setImage(with provider: (any ImageDataProvider)?, placeholder: AlcedoImage? = nil, options: AlcedoOptionsInfo? = nil,
                         manager: ImageManager = .shared, progressBlock: DownloadProgressBlock? = nil,
                         completionHandler: (@Sendable (Result<RetrieveImageResult, AlcedoError>) -> Void)?) -> RetrieveImageTask? {
        setImage(with: provider.map { Source.provider($0) }, placeholder: placeholder, options: options, manager: manager,
                 progressBlock: progressBlock, completionHandler: completionHandler)
    }

    /// Binds the target to `source` with no completion handler (see the full form).
    @discardableResult
    public func setImage(with source: Source?, placeholder: AlcedoImage? = nil, options: AlcedoOptionsInfo? = nil,
                         manager: ImageManager = .shared) -> RetrieveImageTask? {
        setImage(with: source, placeholder: placeholder, options: options, manager: manager, completionHandler: nil)
    }

    /// Binds the target to a resource with no completion handler (see the full form).
    @discardableResult
    public func setImage(with resource: (any Resource)?, placeholder: AlcedoImage? = nil, options: AlcedoOptionsInfo? = nil,
                         manager: ImageManager = .shared) -> RetrieveImageTask? {
        setImage(with: resource, placeholder: placeholder, options: options, manager: manager, completionHandler: nil)
    }

    /// Binds the target to a data provider with no completion handler (see the full form).
    @discardableResult
    public func setImage(with provider: (any ImageDataProvider)?, placeholder: AlcedoImage? = nil, options: AlcedoOptionsInfo? = nil,
                         manager: ImageManager = .shared) -> RetrieveImageTask? {
        setImage(with: provider, placeholder: placeholder, options: options, manager: manager, completionHandler: nil)
    }

    /// Cancels the current request; its completion handler gets
    /// ``RequestErrorReason/cancelled`` and the target keeps what it shows.
    public func cancelImageDownloadTask() {
        imageBinding.cancelCurrent()
    }
}

extension Result {
    /// The error of a failure, `nil` for a success.
    var failureValue: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
