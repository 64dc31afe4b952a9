#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One network fetch: attempts with retries; each attempt waits for a place under the per-host
/// limit, then sends the request, follows redirects and streams the body within the total timeout.
extension ImageDownloader {
    typealias FetchContext = RequestCoalescer<FetchKey, FetchOutcome>.WorkContext

    /// Runs the attempts (``fetchAttempts(_:options:context:)``), then tells the delegate, if any,
    /// that the download ended (once, before the callers are).
    func fetch(_ key: FetchKey, options: DownloadOptions, context: FetchContext) async -> Result<FetchOutcome, AlcedoError> {
        let result = await fetchAttempts(key, options: options, context: context)
        if let delegate = configuration.delegate {
            let response: DownloadResponse?, error: AlcedoError?
            switch result {
            case .success(.downloaded(_, let head)), .success(.notModified(let head)): (response, error) = (head, nil)
            case .failure(let failure):
                switch failure {
                case .responseError(reason: .invalidHTTPStatusCode(let head)), .responseError(reason: .cancelledByDelegate(let head)):
                    response = head
                default:
                    response = nil
                }
                error = failure
            }
            delegate.imageDownloader(self, didFinishDownloadingImageForURL: key.url, with: response, error: error)
        }
        return result
    }

    /// Runs attempts until one succeeds, is cancelled, or the retry strategy (asked about every other failure) stops.
    private func fetchAttempts(_ key: FetchKey, options: DownloadOptions, context: FetchContext) async -> Result<FetchOutcome, AlcedoError> {
        var retriedCount = 0
        var userInfo: (any Sendable)?
        while true {
            let result = await attempt(key, options: options, context: context)
            guard case .failure(let error) = result else { return result }
            if error.isCancellation || Task.isCancelled { return .failure(.requestError(reason: .cancelled)) }
            guard let strategy = options.retryStrategy else { return result }
            let retryContext = RetryContext(source: .network(key.url), error: error, retriedCount: retriedCount, userInfo: userInfo)
            let decision = await strategy.retry(context: retryContext)
            if Task.isCancelled { return .failure(.requestError(reason: .cancelled)) }
            guard case .retry(let nextUserInfo) = decision else { return result }
            userInfo = nextUserInfo
            retriedCount += 1
        }
    }

    private func attempt(_ key: FetchKey, options: DownloadOptions, context: FetchContext) async -> Result<FetchOutcome, AlcedoError> {
        // One attempt uses the settings it started with, whatever changes meanwhile.
        let configuration = self.configuration
        var request = DownloadRequest(url: key.url, headers: configuration.defaultHeaders)
        let validators = key.validators
        for field in validators?.conditionalRequestHeaders ?? [:] {
            request.headers[field.name] = field.value
        }
        if let modifier = options.requestModifier {
            guard let modified = await modifier.modified(for: request) else {
                return .failure(.requestError(reason: .emptyRequest))
            }
            guard modified.url != nil else { return .failure(.requestError(reason: .invalidURL(request: .missingURL))) }
            request = modified
        }
        configuration.delegate?.imageDownloader(self, willDownloadImageForURL: key.url, with: request)
        guard let host = limiterKey(request.url) else {
            return .failure(.requestError(reason: .invalidURL(request.url.absoluteString)))
        }
        do {
            try await hostLimiter.acquire(host, ticket: context.ticket)
        } catch {
            return .failure(.requestError(reason: .cancelled))
        }
        defer { hostLimiter.release(host) }

        let limit = request.timeoutInterval.flatMap { $0.isFinite && $0 > 0 ? Duration.fromSeconds($0) : nil }
            ?? configuration.timeout
        let sentRequest = request
        let send: @Sendable () async -> Result<(Data?, DownloadResponse), AlcedoError> = { [self] in
            await Self.withTimeout(limit, url: sentRequest.url) { [self] in
                await transfer(sentRequest, originalURL: key.url, acceptsNotModified: validators != nil, acceptsAnyBody: key.acceptsAnyBody,
                               options: options, configuration: configuration, context: context)
            }
        }
        let transferred: Result<(Data?, DownloadResponse), AlcedoError>
        if let modifier = options.requestModifier as? any AsyncImageDownloadRequestModifier,
           let started = modifier.onDownloadTaskStarted {
            // The modifier is told of the network request with a task that can stop it.
            let sending = Task { await send() }
            let (stream, continuation) = AsyncStream<DownloadProgress>.makeStream()
            continuation.finish()
            started(DownloadTask(url: sentRequest.url, progress: stream, cancel: { sending.cancel() }))
            transferred = await withTaskCancellationHandler { await sending.value } onCancel: { sending.cancel() }
        } else {
            transferred = await send()
        }
        let body: Data?, response: DownloadResponse
        switch transferred {
        case .failure(let error): return .failure(error)
        case .success(let value): (body, response) = value
        }
        guard var data = body else { return .success(.notModified(response)) }
        if let delegate = configuration.delegate {
            do {
                data = try await delegate.imageDownloader(self, didDownload: data, with: response)
            } catch {
                return .failure(error)
            }
        }
        if !key.acceptsAnyBody, let error = Self.notAnImageError(data, response: response) { return .failure(error) }
        return .success(.downloaded(data, response))
    }

    /// Sends `request`, follows redirects and reads the final body (`nil` for an accepted 304).
    private func transfer(_ initialRequest: DownloadRequest, originalURL: URL, acceptsNotModified: Bool, acceptsAnyBody: Bool,
                          options: DownloadOptions, configuration: Configuration, context: FetchContext) async -> Result<(Data?, DownloadResponse), AlcedoError> {
        var request = initialRequest
        var visited: Set<String> = [request.url.absoluteString]
        var redirectCount = 0
        while true {
            // Every hop is checked before a loader sees it: the first URL, a request modifier's,
            // each redirect's target and a redirect handler's.
            if let scheme = request.url.scheme?.lowercased(), scheme == "http" || scheme == "https" {
                do throws(AlcedoError) {
                    try RequestURLCheck.validateHTTPURL(request.url)
                } catch {
                    return .failure(error)
                }
            }
            let loaded: ImageDataLoaderResponse
            do {
                loaded = try await loader.load(request)
            } catch {
                return .failure(Self.mapLoaderError(error, url: request.url))
            }
            var response = DownloadResponse(url: request.url, originalURL: originalURL, statusCode: loaded.statusCode,
                                            headers: loaded.headers, cacheInfo: HTTPCacheInfo(headers: loaded.headers))
            if initialRequest.url != originalURL { response.requestURL = initialRequest.url }
            if Self.redirectStatusCodes.contains(loaded.statusCode) {
                guard let location = loaded.headers["Location"],
                      let target = URL(string: location, relativeTo: request.url)?.absoluteURL,
                      Self.hostKey(target) != nil else {
                    return .failure(.requestError(reason: .invalidRedirect(request.url, location: loaded.headers["Location"])))
                }
                redirectCount += 1
                if redirectCount > configuration.maximumRedirects {
                    return .failure(.requestError(reason: .tooManyRedirects(target, limit: configuration.maximumRedirects)))
                }
                guard visited.insert(target.absoluteString).inserted else {
                    return .failure(.requestError(reason: .redirectLoop(target)))
                }
                var next = request
                next.url = target
                if Self.hostKey(target) != Self.hostKey(request.url) {
                    // Credentials belong to the origin they were meant for.
                    next.headers.remove("Authorization")
                    next.headers.remove("Cookie")
                }
                if let handler = options.redirectHandler {
                    let task = SessionDataTask(originalURL: originalURL)
                    if let handled = await handler.handleHTTPRedirection(for: task, response: response, newRequest: next) {
                        guard handled.url != nil else { return .failure(.requestError(reason: .invalidURL(request: .missingURL))) }
                        request = handled
                        continue
                    }
                } else {
                    request = next
                    continue
                }
            }
            if loaded.statusCode == 304 && acceptsNotModified {
                return .success((nil, response))
            }
            let delegate = configuration.delegate
            guard delegate?.isValidStatusCode(loaded.statusCode, for: self) ?? configuration.acceptableStatusCodes.contains(loaded.statusCode) else {
                return .failure(.responseError(reason: .invalidHTTPStatusCode(response: response)))
            }
            if let delegate, await delegate.imageDownloader(self, didReceive: response) == .cancel {
                return .failure(.responseError(reason: .cancelledByDelegate(response: response)))
            }
            return await readBody(loaded.body, response: response, limit: min(configuration.maximumBodySize, options.maximumBodySize ?? .max),
                                  checksImage: !acceptsAnyBody, configuration: configuration, context: context)
                .map { (Optional($0), response) }
        }
    }

    /// Streams the body into one buffer, enforcing the size limit `limit` (refused from
    /// `Content-Length` before any byte is read, and as soon as the bytes received pass it)
    /// and `Content-Length`, reporting progress, and stopping early when the first bytes are
    /// not an image.
    private func readBody(_ body: ImageDataBody, response: DownloadResponse, limit: Int, checksImage: Bool, configuration: Configuration,
                          context: FetchContext) async -> Result<Data, AlcedoError> {
        let url = response.url
        let expected = response.expectedContentLength
        if let expected, expected > limit {
            return .failure(.responseError(reason: .bodyTooLarge(url, limit: limit, received: 0)))
        }
        // The body counts against the memory budget while it arrives (released when it is
        // handed on: the decode reserves its own working set, the source's bytes included).
        var reservation: MemoryReservation?
        if let budget = configuration.memoryBudget {
            do throws(AlcedoError) {
                reservation = try await budget.reserveMemory(expected ?? Self.unknownLengthReservation,
                                                             for: "downloading \(url.absoluteString)")
            } catch {
                return .failure(error)
            }
        }
        defer { reservation?.release() }
        // Append-only, so that a caller joining mid-download is given the bytes so far
        // without a copy (see `DownloadProgress.catchUp`).
        let data = ReceivedBody(capacity: expected ?? 0)
        var received = 0
        // Without a delegate (which may rewrite the bytes), a body that does not start like an
        // image is refused as soon as enough of it has arrived.
        var needsEarlySniff = checksImage && configuration.delegate == nil
        do {
            for try await chunk in body {
                guard chunk.count <= limit - received else {
                    return .failure(.responseError(reason: .bodyTooLarge(url, limit: limit, received: received + chunk.count)))
                }
                data.append(chunk)
                received += chunk.count
                reservation?.grow(to: data.capacity)
                context.reportProgress(DownloadProgress(receivedBytes: received, expectedBytes: expected, chunk: chunk, body: data))
                if needsEarlySniff && received >= Self.sniffLength {
                    needsEarlySniff = false
                    if let error = Self.notAnImageError(data.prefix(received), response: response) { return .failure(error) }
                }
            }
        } catch {
            let mapped = Self.mapLoaderError(error, url: url)
            if mapped.isConnectionFailure, let expected, received < expected {
                return .failure(.responseError(reason: .lengthMismatch(url, expected: expected, received: received)))
            }
            return .failure(mapped)
        }
        if let expected, received != expected {
            return .failure(.responseError(reason: .lengthMismatch(url, expected: expected, received: received)))
        }
        return .success(data.completed())
    }

    /// Status codes that redirect with a `Location`.
    private static let redirectStatusCodes: Set<Int> = [301, 302, 303, 307, 308]

    /// What a body without `Content-Length` reserves from the memory budget before its first byte.
    static let unknownLengthReservation = 256 << 10

    /// How many bytes ``ImageFormat/sniff(_:)-(Data)`` may look at.
    private static let sniffLength = 4096

    /// `scheme://host:port` for an http(s) URL with a host, the key of the per-host limit.
    static func hostKey(_ url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty else { return nil }
        return "\(scheme)://\(host.lowercased()):\(url.port ?? (scheme == "https" ? 443 : 80))"
    }

    /// The key of the per-host limit for a request: ``hostKey(_:)`` for http(s), else
    /// `scheme://host` (`s3://bucket`, `local://`) for a scheme the loader reads; `nil` when
    /// no loader reads the URL.
    func limiterKey(_ url: URL) -> String? {
        if let key = Self.hostKey(url) { return key }
        guard let scheme = url.scheme?.lowercased(), loader.supportedSchemes.contains(scheme) else { return nil }
        return "\(scheme)://\(url.host?.lowercased() ?? "")"
    }

    static func mapLoaderError(_ error: any Error, url: URL) -> AlcedoError {
        switch error {
        case let error as AlcedoError: return error
        case is CancellationError: return .requestError(reason: .cancelled)
        default: return .networkError(reason: ConnectionFailure.reason(for: error, url: url))
        }
    }

    /// Runs `operation`, giving up with `.timedOut` after `limit`.
    static func withTimeout<T: Sendable>(_ limit: Duration, url: URL,
                                         _ operation: @escaping @Sendable () async -> Result<T, AlcedoError>) async -> Result<T, AlcedoError> {
        await withTaskGroup(of: Result<T, AlcedoError>?.self) { group in
            group.addTask { await operation() }
            group.addTask {
                do {
                    try await Task.sleep(for: limit)
                    return nil
                } catch {
                    return .failure(.requestError(reason: .cancelled))
                }
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .failure(.networkError(reason: .timedOut(url, limit: limit)))
        }
    }

    /// The error for bytes that match no image signature (whatever the `Content-Type` says),
    /// as Kingfisher reports a body it cannot turn into an image:
    /// `.processorError(reason: .processingFailed(processor: DefaultImageProcessor.default, item: .data(data)))`.
    /// The item's description shows how the bytes start.
    static func notAnImageError(_ data: Data, response: DownloadResponse) -> AlcedoError? {
        guard ImageFormat.sniff(data) == .unknown else { return nil }
        return .processorError(reason: .processingFailed(processor: DefaultImageProcessor.default, item: .data(data)))
    }

    /// The start of `data` for a message: quoted text when it is printable, hex bytes otherwise.
    static func excerpt(of data: Data) -> String {
        let head = data.prefix(64)
        let isText = head.allSatisfy { $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || (0x20...0x7E).contains($0) || $0 >= 0x80 }
        if isText, let text = String(data: head, encoding: .utf8) ?? String(data: head.dropLast(3), encoding: .utf8) {
            let flat = text.replacing(literal: "\r", with: "\\r").replacing(literal: "\n", with: "\\n")
            return "\"\(flat)\"" + (data.count > head.count ? "…" : "")
        }
        let hex = data.prefix(16).map { byte in String(byte, radix: 16).count == 1 ? "0" + String(byte, radix: 16) : String(byte, radix: 16) }
        return "bytes " + hex.joined(separator: " ") + (data.count > 16 ? " …" : "")
    }
}
