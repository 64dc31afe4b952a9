/// The form of `retrieveImage` that Kingfisher's view extensions call (internal there too), for
/// Kingfisher's tests and code ported from them.
extension ImageManager {
    /// Retrieves the image of `source` with options already read (the manager's
    /// ``defaultOptions`` are not added), calling `completionHandler` once on the options'
    /// callback queue.
    /// - Parameters:
    ///   - downloadTaskUpdated: called as each alternative source is tried, with its task
    ///     (`nil` for a data provider), as in
    ///     ``retrieveImage(with:options:progressBlock:downloadTaskUpdated:completionHandler:)-(Source,_,_,_,_)``
    ///     (default `nil`: not called).
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
                             downloadTaskUpdated: downloadTaskUpdated, completionHandler: { result in completionHandler?(result) })
    }
}

/// Kingfisher's `downloadTaskUpdated:` form of the callback `retrieveImage`.
extension ImageManager {
    /// Retrieves the image of `source` as
    /// ``retrieveImage(with:options:progressBlock:completionHandler:)-(Source,_,_,_)`` does, and calls
    /// `downloadTaskUpdated` as each alternative source (``AlcedoOptionsInfoItem/alternativeSources(_:)``)
    /// is tried, with that source's task, as Kingfisher does: once per alternative source tried,
    /// as it starts and before the completion handler.
    ///
    /// For a network source the task is a ``DownloadTask`` of the source's URL: its
    /// ``DownloadTask/cancel()`` cancels the attempt, and the retrieval then ends with
    /// ``RequestErrorReason/cancelled`` without trying the sources after it; its
    /// ``DownloadTask/progress`` is the attempt's. For a data provider it is `nil`. The returned
    /// task cancels the whole retrieval, whichever source it is at. Differences from Kingfisher:
    /// the returned task is a ``RetrieveImageTask``, and `downloadTaskUpdated` is not called for
    /// retries (``AlcedoOptionsInfoItem/retryStrategy(_:)``), which Alcedo runs inside the
    /// download the returned task already cancels.
    /// - Parameters:
    ///   - source: where the image comes from.
    ///   - options: the request's options (default `nil`: the manager's ``defaultOptions``).
    ///   - progressBlock: called as a download's body arrives (default `nil`).
    ///   - downloadTaskUpdated: called with each alternative source's task, on the thread that
    ///     tries it, as it starts.
    ///   - completionHandler: called once with the result or the error, on the options' callback queue.
    /// - Returns: a task to cancel this caller (never `nil` here, optional for Kingfisher's shape).
    @discardableResult
    public func retrieveImage(with source: Source, options: AlcedoOptionsInfo? = nil,
                              progressBlock: DownloadProgressBlock? = nil,
                              downloadTaskUpdated: @escaping @Sendable (DownloadTask?) -> Void,
                              completionHandler: @escaping @Sendable (Result<RetrieveImageResult, AlcedoError>) -> Void) -> RetrieveImageTask? {
        retrieveImage(with: source, parsedOptions: parsedOptions(options), progressBlock: progressBlock, previewHandler: nil,
                      downloadTaskUpdated: downloadTaskUpdated, completionHandler: completionHandler)
    }

    /// ``retrieveImage(with:options:progressBlock:downloadTaskUpdated:completionHandler:)-(Source,_,_,_,_)``
    /// for a resource (a `URL` is one).
    @discardableResult
    public func retrieveImage(with resource: any Resource, options: AlcedoOptionsInfo? = nil,
                              progressBlock: DownloadProgressBlock? = nil,
                              downloadTaskUpdated: @escaping @Sendable (DownloadTask?) -> Void,
                              completionHandler: @escaping @Sendable (Result<RetrieveImageResult, AlcedoError>) -> Void) -> RetrieveImageTask? {
        retrieveImage(with: resource.convertToSource(), options: options, progressBlock: progressBlock,
                      downloadTaskUpdated: downloadTaskUpdated, completionHandler: completionHandler)
    }
}

/// Kingfisher's return type for the callback `retrieveImage`.
extension ImageManager {
    /// The callback `retrieveImage` of a resource as Kingfisher types its result, a `DownloadTask?`:
    /// the same call as Alcedo's `retrieveImage(with:options:progressBlock:completionHandler:)` of a
    /// resource, chosen only where a `DownloadTask?` is asked for
    /// (`let task: DownloadTask? = manager.retrieveImage(with: url) { … }`); elsewhere that form,
    /// which returns a ``RetrieveImageTask``, is.
    ///
    /// The task's ``DownloadTask/url`` is the resource's download URL, its
    /// ``DownloadTask/progress`` the retrieval's download progress (it ends with the retrieval),
    /// and its ``DownloadTask/cancel()`` cancels this caller's retrieval as
    /// ``RetrieveImageTask/cancel()`` does: a cache lookup too, not only a download. Never `nil`
    /// here, optional for Kingfisher's shape. The parameters and their defaults are those of
    /// the ``RetrieveImageTask`` form.
    @_disfavoredOverload
    @discardableResult
    public func retrieveImage(with resource: any Resource, options: AlcedoOptionsInfo? = nil,
                              progressBlock: DownloadProgressBlock? = nil,
                              completionHandler: @escaping @Sendable (Result<RetrieveImageResult, AlcedoError>) -> Void) -> DownloadTask? {
        let (updates, continuation) = AsyncStream.makeStream(of: DownloadProgress.self, bufferingPolicy: .bufferingNewest(1))
        let reportProgress: DownloadProgressBlock = { received, total in
            continuation.yield(DownloadProgress(receivedSize: received, totalSize: total))
            progressBlock?(received, total)
        }
        let handle = retrieveImage(with: resource.convertToSource(), parsedOptions: parsedOptions(options),
                                   progressBlock: reportProgress, previewHandler: nil) { result in
            continuation.finish()
            completionHandler(result)
        }
        return DownloadTask(url: resource.downloadURL, progress: updates, cancel: { handle.cancel() })
    }
}

/// Kingfisher's `loadAndCacheImage` (internal there too): the step of a retrieval that loads and
/// stores, without the cache lookups before it.
extension ImageManager {
    /// Loads `source` (a download, or the data provider) and stores it in the caches without
    /// looking in them first, then calls `completionHandler` once on the options' callback
    /// queue: the step every retrieval takes when the caches miss
    /// (``loadAndCache(_:revalidating:workLock:context:metrics:)``), run by itself.
    ///
    /// The options are `context`'s (the manager's ``defaultOptions`` are not added); they decide
    /// the caches, the processor and the stores as for a retrieval: the processed image goes to
    /// memory before the completion, to disk after it, or before it under
    /// ``AlcedoOptionsInfoItem/waitForCache``; the original is kept too under
    /// ``AlcedoOptionsInfoItem/cacheOriginalImage``. The result's
    /// ``RetrieveImageResult/originalSource`` is `context`'s. Callers loading the same source
    /// with the same options this way share one load; a retrieval that reads the caches never
    /// joins it. Alternative sources are not tried.
    /// - Parameters:
    ///   - source: the source to load.
    ///   - context: the retrieval's options and original source.
    ///   - completionHandler: called once with the result or the error.
    /// - Returns: a task to cancel this caller.
    @discardableResult
    func loadAndCacheImage(source: Source, context: RetrievingContext<Source>,
                           completionHandler: (@Sendable (Result<RetrieveImageResult, AlcedoError>) -> Void)?) -> RetrieveImageTask {
        let options = context.options
        let handle = RetrieveImageTask()
        handle.previewContinuation.finish()
        handle.attach(Task {
            let result: Result<RetrieveImageResult, AlcedoError>
            do throws(AlcedoError) {
                result = .success(try await retrieveSingle(source, originalSource: context.originalSource, options: options,
                                                           progress: nil, readingCaches: false))
            } catch {
                result = .failure(error)
            }
            options.callbackQueue.execute { completionHandler?(result) }
        })
        return handle
    }
}
