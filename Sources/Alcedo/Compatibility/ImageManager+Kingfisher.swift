/// The form of `retrieveImage` that Kingfisher's view extensions call (internal there too), for
/// Kingfisher's tests and code ported from them.
extension ImageManager {
    /// Retrieves the image of `source` with options already read (the manager's
    /// ``defaultOptions`` are not added), calling `completionHandler` once on the options'
    /// callback queue.
    /// - Parameters:
    ///   - downloadTaskUpdated: Kingfisher calls it when a retry or an alternative source starts a
    ///     new download task; Alcedo's returned task stays the caller's handle through retries and
    ///     alternative sources, so it is not called (default `nil`).
    ///   - progressiveImageSetter: called with each progressive preview
    ///     (``AlcedoOptionsInfoItem/progressiveJPEG(_:)``) before the completion (default `nil`).
    ///   - referenceTaskIdentifierChecker: whether the caller still wants the image; it becomes
    ///     the options' ``AlcedoParsedOptionsInfo/sourceTaskIdentifierChecker`` (default `nil`: the
    ///     options' own).
    ///   - completionHandler: called once with the result or the error.
    /// - Returns: a task to cancel this caller.
    @discardableResult
    func retrieveImage(with source: Source, options: AlcedoParsedOptionsInfo,
                       downloadTaskUpdated: (@Sendable (DownloadTask?) -> Void)? = nil,
                       progressiveImageSetter: (@Sendable (AlcedoImage?) -> Void)? = nil,
                       referenceTaskIdentifierChecker: (@Sendable () -> Bool)? = nil,
                       completionHandler: (@Sendable (Result<RetrieveImageResult, AlcedoError>) -> Void)?) -> RetrieveImageTask? {
        var options = options
        if let referenceTaskIdentifierChecker { options.sourceTaskIdentifierChecker = referenceTaskIdentifierChecker }
        var preview: (@Sendable (AlcedoImage) -> Void)?
        if let progressiveImageSetter {
            preview = { (image: AlcedoImage) in progressiveImageSetter(image) }
        }
        return retrieveImage(with: source, parsedOptions: options, progressBlock: nil, previewHandler: preview,
                             completionHandler: { result in completionHandler?(result) })
    }
}
