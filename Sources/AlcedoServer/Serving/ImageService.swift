import Prometheus
import Alcedo
import Crypto
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// The image proxy's request handling, independent of how it is mounted: parses and verifies
/// a path, answers conditional requests, produces (once per variant) and sends results.
/// No image logic lives here: it is all ``ImageServerPipeline``'s ImageManager and
/// ``ImgproxyProcessor``.
public final class ImageService: Sendable {
    /// Where URL warnings (a boolean that is not one, a preset loop) are logged.
    static let logger = Logger(label: "alcedo.serve")
    /// The configuration the service was made with.
    public let configuration: ImageServerConfiguration
    /// The pipeline behind it.
    public let pipeline: ImageServerPipeline
    /// The metrics it records.
    public let metrics: ServerMetrics
    let results: ResultStore
    /// The variant keys of recently revalidated paths.
    let revalidations = RevalidationTable()
    let sources = SourceInfoTable()
    let gate = SourceGate()
    let admission: AdmissionLimiter
    /// The working-memory budget every production reserves from (see ``ImageServerConfiguration/maxMemory``).
    public let memoryBudget: MemoryBudget
    /// `Cache-Control` of every image response, made once.
    let cacheControl: String
    /// The fallback image as a source, keyed by a hash of its bytes (``ImageServerConfiguration/fallbackImage``).
    let fallbackSource: Source?

    /// Creates the service and its pipeline for `configuration`.
    public init(configuration: ImageServerConfiguration) {
        self.configuration = configuration
        memoryBudget = Self.makeMemoryBudget(configuration)
        pipeline = ImageServerPipeline(configuration: configuration, memoryBudget: memoryBudget)
        let budget = memoryBudget
        results = ResultStore(capacity: configuration.resultCacheBytes) { budget.setHeld($0, by: "result") }
        metrics = ServerMetrics(sharedTier: pipeline.cache.sharedTier,
                                stores: [configuration.resultStore, configuration.sourceStore].compactMap { $0 },
                                memory: ServerMetrics.MemorySources(budget: memoryBudget, results: results, cache: pipeline.cache),
                                imgproxyNamespace: configuration.imgproxyMetrics ? configuration.prometheusNamespace : nil,
                                workerCount: configuration.concurrency)
        // Waiting for a source holds no processing slot: the budget hands out the slots
        // (``ImageServerConfiguration/concurrency``) once the source is loaded. Requests in
        // production, loading or waiting, are bounded by the slots and the queue together.
        admission = AdmissionLimiter(limit: configuration.concurrency + configuration.queueLength, queueLength: 0)
        cacheControl = "public, max-age=\(configuration.ttl)"
        fallbackSource = configuration.fallbackImage.map { data in
            let digest = lowercaseHex(SHA256.hash(data: data).prefix(12))
            return .provider(RawImageDataProvider(data: data, cacheKey: "alcedo-fallback-image-" + digest))
        }
    }

    /// Releases the pipeline's connections.
    public func shutdown() async {
        // Writes still queued for the stores get a few seconds to finish.
        for store in [configuration.resultStore, configuration.sourceStore].compactMap({ $0 }) {
            await store.flush(limit: .seconds(5))
        }
        await pipeline.shutdown()
    }

    /// The budget of `configuration`: ``ImageServerConfiguration/maxMemory`` with the process's
    /// share and the caches' sizes set aside; one log line when requests start waiting for
    /// memory (at most one per 10 s). With ``ImageServerConfiguration/returnsFreedMemory``, a
    /// grant that would take the resident size past 15/16 of the budget first gives the
    /// allocator's free memory back to the system (``ProcessMemory/trim()``).
    static func makeMemoryBudget(_ configuration: ImageServerConfiguration) -> MemoryBudget {
        let log = MemoryWaitLog()
        let limit = configuration.maxMemory / 16 * 15, returns = configuration.returnsFreedMemory
        let budget = MemoryBudget(capacity: configuration.maxMemory, maximumConcurrent: configuration.concurrency,
                                  queueLength: configuration.queueLength, observer: { log.record($0) }, onGrant: { bytes in
                                      guard returns, let resident = ProcessMemory.residentBytes(), resident + bytes > limit else { return }
                                      ProcessMemory.trim()
                                  })
        budget.setCeiling(configuration.processMemoryShare, for: "process")
        budget.setHeld(configuration.processMemoryShare, by: "process")
        budget.setCeiling(configuration.resultCacheBytes, for: "result")
        budget.setCeiling(configuration.memoryCacheBytes, for: "memory")
        return budget
    }

    /// Tells the budget what the decoded-image cache holds now.
    func noteCacheBytes() {
        if configuration.memoryCacheBytes > 0 {
            memoryBudget.setHeld(pipeline.cache.memoryStorage.totalCost, by: "memory")
        }
    }

    // MARK: Image route

    /// Answers `GET`/`HEAD` for an imgproxy path (the request target without the query).
    /// - Parameters:
    ///   - path: the path, without the query.
    ///   - request: the request.
    ///   - stages: where the request's stages, the tier that answered and its error are
    ///     recorded (default `nil`: nowhere). See ``startRequest(_:)`` and ``finishRequest(_:response:path:stages:)``.
    public func image(path: String, request: Request, stages: RequestStages? = nil) async -> Response {
        let response: Response
        do {
            response = try await Self.within(configuration.requestTimeout) { [self] in
                try await imageResponse(path: path, request: request, stages: stages)
            }
        } catch {
            let status = configuration.dialect == .thumbor ? ErrorStatus(thumbor: error) : ErrorStatus(error)
            let named = logged(naming(status, for: error))
            stages?.fail(type: ErrorStatus.imgproxyType(of: error), reason: named.reason)
            response = errorResponse(named)
        }
        metrics.recordResponse(status: Int(response.status.code))
        return response
    }

    /// The value of `body`, or a 503 thrown once `limit` has passed (`nil`: no limit), as
    /// imgproxy's `IMGPROXY_TIMEOUT` answers. The work goes on after the answer: a production is
    /// shared with the other requests for the same variant, and its result is kept for them.
    static func within<T: Sendable>(_ limit: Duration?, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        guard let limit else { return try await body() }
        let answer = FirstAnswer<T>()
        var timer: Task<Void, Never>?
        defer { timer?.cancel() }
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            answer.waiting(continuation)
            Task {
                do { answer.give(.success(try await body())) } catch { answer.give(.failure(error)) }
            }
            timer = Task {
                try? await Task.sleep(for: limit)
                let seconds = ProcessingOptions.number(Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18)
                answer.give(.failure(ErrorStatus.Thrown(status: ErrorStatus(status: 503,
                                                                             reason: "timeout: the request took longer than \(seconds) s (--timeout)"))))
            }
        }
    }

    /// Logs what an error's answer leaves out (why an object store refused access).
    func logged(_ status: ErrorStatus) -> ErrorStatus {
        if let log = status.log { configuration.logger.warning("\(log)") }
        return status
    }

    /// Adds the configured source limit to a decoder's pixel, frame or size refusal, so the
    /// answer names the setting (`--max-src-resolution`) as well as the decoder's figure.
    private func naming(_ status: ErrorStatus, for error: any Error) -> ErrorStatus {
        if let error = error as? AlcedoError, case .neverFits = error.memoryBudgetReason {
            return ErrorStatus(status: status.status, reason: status.reason + " (--max-memory \(configuration.maxMemory >> 20) MiB)")
        }
        guard let error = error as? AlcedoError, let reason = error.decodingReason else { return status }
        switch reason {
        case .tooManyPixels, .tooManyFrames, .animationTooLarge:
            let megapixels = ProcessingOptions.number(configuration.maxSourceResolution)
            return ErrorStatus(status: status.status,
                               reason: status.reason + " (source limit: \(megapixels) MP summed over all frames)")
        default:
            return status
        }
    }

    private func imageResponse(path: String, request: Request, stages: RequestStages?) async throws -> Response {
        // A conditional request for a path revalidated before: answered from the result's
        // ETag without parsing the path again (see ``RevalidationTable``).
        let conditional = request.headers[.ifNoneMatch] != nil || request.headers[.ifModifiedSince] != nil
        // With client hints the options depend on more than the path and Accept: no shortcut.
        let revalidationKey = conditional && !configuration.clientHints
            ? RevalidationTable.key(path: path, accept: request.headers[values: .accept]) : nil
        if let revalidationKey, let known = revalidations.entry(for: revalidationKey),
           let stored = results.cached(known.variantKey),
           notModified(request, etag: stored.etag, lastModified: stored.lastModified) {
            metrics.recordHit(tier: "not-modified")
            stages?.tier = "not-modified"
            return notModifiedResponse(etag: stored.etag, lastModified: stored.lastModified, negotiated: known.negotiated)
        }
        let parsed: ImgproxyPath
        switch configuration.dialect {
        case .imgproxy:
            parsed = try parseAndVerify(path, hints: configuration.clientHints ? ClientHints(request.headers) : nil)
        case .thumbor:
            let thumborPath = try ThumborPath.parse(path)
            parsed = try parseAndVerify(thumbor: thumborPath)
            if thumborPath.meta { return try await metaResponse(thumborPath, plan: parsed, request: request) }
        }
        stages?.sourceHost = Self.host(of: parsed.sourceURL)
        let sourceURL = try pipeline.sourceGuard.checkSource(parsed.fetchableSourceURL)
        if parsed.options.raw { return try await rawResponse(parsed, url: sourceURL, request: request) }
        if !parsed.options.skipProcessing.isEmpty,
           let response = try await unprocessedResponse(parsed, url: sourceURL, request: request) {
            return response
        }
        let requested = parsed.requestedFormat
        let clientAccepts = AcceptedImageFormats(acceptHeaders: request.headers[values: .accept])
        // --enforce-webp/--enforce-avif: a client that accepts the format gets it even when the
        // URL names another (AVIF only for a result that is not animated, as imgproxy).
        let enforced = requested == nil ? AcceptedImageFormats()
            : AcceptedImageFormats(webP: configuration.enforceWebP && clientAccepts.webP,
                                   avif: configuration.enforceAVIF && clientAccepts.avif,
                                   jxl: configuration.enforceJXL && clientAccepts.jxl)
        let accepted = requested == nil ? configuration.negotiation.usable(clientAccepts) : AcceptedImageFormats()
        // The answer depends on Accept: negotiated, or enforceable.
        let negotiated = requested == nil || configuration.enforceWebP || configuration.enforceAVIF || configuration.enforceJXL
        var unsigned = parsed
        unsigned.signature = ""
        let canonical = unsigned
        var responseEncoding = ResponseEncoding(requested: requested, accepted: accepted, enforced: enforced, quality: parsed.options.quality,
                                        defaultQualities: FormatQualities(fallback: configuration.defaultQuality,
                                                                          perFormat: configuration.formatQuality
                                                                              .merging(parsed.options.formatQuality) { $1 }),
                                        avifSpeed: configuration.avifSpeed, background: parsed.options.flatteningBackground,
                                        maxBytes: parsed.options.maxBytes, preferredFormats: configuration.preferredFormats)
        responseEncoding.sanitizeSVG = configuration.sanitizeSVG
        responseEncoding.rasterizeSVG = configuration.alwaysRasterizeSVG
        responseEncoding.stripMetadata = parsed.options.stripMetadata
        responseEncoding.keepCopyright = parsed.options.keepCopyright ?? true
        responseEncoding.progressiveJPEG = configuration.progressiveJPEG
        responseEncoding.webpEffort = configuration.webpEffort
        responseEncoding.webpPreset = configuration.webpPreset
        responseEncoding.pngInterlaced = configuration.pngInterlaced
        responseEncoding.pngPaletteColors = configuration.pngQuantize ? configuration.pngQuantizationColors : 0
        responseEncoding.pngToJPEG = parsed.options.pngToJPEG ?? configuration.thumbor.autoPNGToJPG
        if configuration.dialect == .thumbor {
            responseEncoding.maxBytesSchedule = .thumbor
            responseEncoding.alphaConversion = .drop
        }
        let encoding = responseEncoding
        let variantKey = canonical.signedPart + "|" + encoding.identifier

        if let revalidationKey {
            revalidations.record(revalidationKey, RevalidationTable.Entry(variantKey: variantKey, negotiated: negotiated))
        }
        // A conditional request answered from what is known of the source, without processing.
        // A result in memory knows its own ETag: nothing to look up or hash.
        if conditional, let stored = results.cached(variantKey),
           notModified(request, etag: stored.etag, lastModified: stored.lastModified) {
            metrics.recordHit(tier: "not-modified")
            stages?.tier = "not-modified"
            return notModifiedResponse(etag: stored.etag, lastModified: stored.lastModified, negotiated: negotiated)
        }
        var known = conditional ? sources[parsed.sourceURL] : nil
        if conditional, known == nil { known = await sourceInfoFromDisk(parsed.sourceURL) }
        if let info = known, let format = Self.predictedFormat(encoding, source: info, page: parsed.options.page,
                                                               stillOnly: parsed.options.security.maxAnimationFrames == 1) {
            let etag = etag(for: canonical, validator: info.validator, format: format)
            if notModified(request, etag: etag, lastModified: info.lastModified) {
                metrics.recordHit(tier: "not-modified")
                stages?.tier = "not-modified"
                return notModifiedResponse(etag: etag, lastModified: info.lastModified, negotiated: negotiated)
            }
        }

        let (result, joined) = try await results.value(for: variantKey) { [self] in
            try await produce(parsed, canonical: canonical, url: sourceURL, encoding: encoding, stages: stages)
        }
        metrics.recordHit(tier: joined ? "result" : result.tier)
        stages?.tier = joined ? "result" : result.tier
        if result.fallbackStatus == nil, notModified(request, etag: result.etag, lastModified: result.lastModified) {
            return notModifiedResponse(etag: result.etag, lastModified: result.lastModified, negotiated: negotiated)
        }
        var headers = cachingHeaders(etag: result.etag, lastModified: result.lastModified, negotiated: negotiated)
        if let maxAge = parsed.options.maxAge { headers[.cacheControl] = maxAge > 0 ? "max-age=\(maxAge),public" : "no-cache" }
        if result.fallbackStatus != nil {
            // A fallback answer lives for the fallback TTL and has no validators, as imgproxy's.
            headers[.cacheControl] = "public, max-age=\(configuration.fallbackImageTTL ?? configuration.ttl)"
            headers[.eTag] = nil
            headers[.lastModified] = nil
            if configuration.debugHeaders { headers[.init("Fallback-Image")!] = "1" }
        }
        headers[.contentType] = result.format.mimeType
        if let debug = result.debug { debug.add(to: &headers) }
        headers[.contentLength] = String(result.body.readableBytes)
        headers[.contentDisposition] = Self.contentDisposition(source: parsed.sourceURL, filename: parsed.options.filename,
                                                               format: result.format, attachment: parsed.options.returnAttachment)
        addCanonicalLink(to: &headers, source: sourceURL)
        let body: ResponseBody = request.method == .head ? ResponseBody() : ResponseBody(byteBuffer: result.body)
        return Response(status: result.fallbackStatus.map { HTTPResponse.Status(code: $0) } ?? .ok, headers: headers, body: body)
    }

    /// `Link: <SOURCE>; rel="canonical"` for an http(s) source, with
    /// ``ImageServerConfiguration/setCanonicalHeader``, as imgproxy's `IMGPROXY_SET_CANONICAL_HEADER`.
    private func addCanonicalLink(to headers: inout HTTPFields, source: URL) {
        guard configuration.setCanonicalHeader, source.scheme == "http" || source.scheme == "https" else { return }
        headers[HTTPField.Name("Link")!] = "<\(source.absoluteString)>; rel=\"canonical\""
    }

    /// Whether `error` is one a fallback image answers: the source could not be fetched
    /// (refused, missing, failed, too large, timed out) or is not an image.
    static func callsForFallback(_ error: any Error) -> Bool {
        if error is SourceRefusal { return true }
        guard let error = error as? AlcedoError else { return false }
        switch error {
        case .requestError(let reason):
            if case .taskCancelled = reason { return false }
            return true
        case .responseError:
            return true
        case .processorError(let reason) where reason.cause != nil:
            switch reason.cause {
            case .decodingFailed(.emptyData)?, .decodingFailed(.unsupportedFormat)?, .decodingFailed(.invalidHeader)?: return true
            default: return false
            }
        case .processorError(.processingFailed(_, .data(let data))):
            // Bytes no decoder took: not an image.
            return ImageFormat.sniff(data) == .unknown
        case .imageSettingError(.alternativeSourcesExhausted(let failures)):
            return failures.last.map { callsForFallback($0.error) } ?? false
        default:
            return false
        }
    }

    /// Loads, processes and encodes one variant (run once per variant in flight).
    private func produce(_ parsed: ImgproxyPath, canonical: ImgproxyPath, url: URL, encoding: ResponseEncoding,
                         stages: RequestStages?) async throws -> EncodedResult {
        let admitted = if let stages { await stages.stage(.queue) { await admission.acquire() } } else { await admission.acquire() }
        guard admitted else {
            throw ErrorStatus.Thrown(status: .queueFull)
        }
        defer { admission.release() }
        let start = ContinuousClock.now
        let overlays = try await urlImages(parsed.options.overlayURLs)
        let processor = ImgproxyProcessor(options: parsed.options, maximumResultSide: configuration.maxResultSide,
                                          maxResultDimension: configuration.maxResultDimension, watermark: configuration.watermark,
                                          urlImages: overlays)
        let requested = encoding.requested
        let firstFrameOnly = parsed.options.page == nil
            && (requested.map(Self.writesFirstFrameOnly) == true || parsed.options.security.maxAnimationFrames == 1)
        var options = pipeline.options(processor: processor, encoding: encoding, firstFrameOnly: firstFrameOnly,
                                       page: parsed.options.page)
        if let limits = decodingLimits(for: parsed.options.security) { options.append(.decodingLimits(limits)) }
        // strip_color_profile:0: the pixels stay in the source's colour space and the encoder
        // embeds its ICC profile, for the formats whose encoders embed one (JPEG, PNG, WebP).
        if parsed.options.keepsColorProfile, Self.embedsColorProfile(encoding) { options.append(.colorManagement(.preserve)) }
        // strip_metadata:0 and keep_copyright: the source's EXIF, XMP and IPTC are read.
        if encoding.keepsMetadata { options.append(.readMetadata) }
        // enforce_thumbnail: a HEIC or AVIF source's embedded thumbnail, when it has one.
        if parsed.options.enforceThumbnail == true { options.append(.preferEmbeddedThumbnail) }
        // max_src_file_size: checked against Content-Length before the body is read and while
        // it streams (the download stops once it passes); a copy already on disk is checked below.
        if let limit = parsed.options.security.maxSourceFileSize, limit > 0 { options.append(.maximumBodySize(limit)) }
        let retrieved: RetrieveImageResult
        var fallbackStatus: Int?
        let retrieveStart = ContinuousClock.now
        do {
            retrieved = try await RequestStages.$current.withValue(stages) {
                try await gate.run(parsed.sourceURL) {
                    try await pipeline.manager.retrieveImage(with: url, options: options)
                }
            }
            if let stages { Self.recordRetrieval(retrieved, started: retrieveStart, host: Self.host(of: parsed.sourceURL), in: stages) }
        } catch {
            // --fallback-image: a source that cannot be fetched or is not an image is answered
            // with the fallback image, processed with the same options, as imgproxy.
            guard let fallback = fallbackSource, Self.callsForFallback(error) else { throw error }
            let failure = ErrorStatus(error)
            configuration.logger.warning("could not load \(parsed.sourceURL) (\(failure.reason)): answering the fallback image")
            fallbackStatus = configuration.fallbackImageStatus == 0 ? failure.status : configuration.fallbackImageStatus
            retrieved = try await pipeline.manager.retrieveImage(with: fallback, options: options)
        }
        var info: SourceInfo
        if fallbackStatus == nil {
            info = await sourceInfo(for: parsed.sourceURL, result: retrieved)
            // All frames loaded and kept: the result tells whether the source is animated; else
            // what was learned before stays.
            info.animated = parsed.options.page == nil && !firstFrameOnly ? retrieved.image.isAnimated : sources[parsed.sourceURL]?.animated
            sources[parsed.sourceURL] = info
        } else {
            info = SourceInfo(validator: "fallback", lastModified: nil, format: retrieved.image.sourceFormat)
        }
        if let data = retrieved.originalData, retrieved.originalCacheType == .none {
            metrics.sourceBytes.increment(by: Int64(data.count))
            metrics.imgproxy?.downloadBufferSize.record(Double(data.count))
        }
        if let limit = parsed.options.security.maxSourceFileSize, limit > 0, let data = retrieved.originalData, data.count > limit {
            throw ErrorStatus.Thrown(status: ErrorStatus(status: 422, reason: "the source is \(data.count) bytes, over the URL's max_src_file_size of \(limit)"))
        }
        let image = retrieved.image
        let format = encoding.format(source: info.format, animated: image.isAnimated, alpha: { image.hasAlpha })
        let body: Data
        if let stored = retrieved.variantData, ImageFormat.sniff(stored) == format {
            // The caches' copy of this variant is the response itself (``ResponseSerializer``).
            body = stored
        } else if format == .svg {
            // An SVG source answered as SVG passes through (sanitized), unprocessed, as in imgproxy.
            var original = retrieved.originalData
            if original == nil { original = try? await pipeline.cache.retrieveDataInDiskCache(forKey: parsed.sourceURL)?.data }
            body = try encoding.svgBody(original: original)
        } else {
            let image = retrieved.image
            // The encoding's own working set, reserved as a decode's is.
            let working = WorkingSetEstimate.estimate(image: image, options: DecodingOptions(), outputFormat: format)
            let reserve = { [memoryBudget] in try await memoryBudget.reserve(working.total, for: "encoding this \(image.pixelSize) image") }
            let reservation = if let stages { try await stages.stage(.memoryBudget, reserve) } else { try await reserve() }
            defer { reservation.release() }
            let encode = {
                try await Self.offPool { () throws(AlcedoError) -> Data in
                    try Self.encode(image, as: format, encoding: encoding)
                }
            }
            body = if let stages { try await stages.stage(.encode, attributes: [("format", format.rawValue)], encode) } else { try await encode() }
            metrics.recordEncoding()
        }
        noteCacheBytes()
        metrics.processingTime.record(ContinuousClock.now - start)
        metrics.recordProduced(processedHere: retrieved.metrics.processing > .zero)
        let tier: String
        switch retrieved.originalCacheType {
        case .memory: tier = "memory"
        case .disk: tier = "disk"
        case .none: tier = "source"
        }
        let lifetime: Duration = .seconds(60)
        let debug = configuration.debugHeaders
            ? await debugFacts(source: parsed.sourceURL, original: retrieved.originalData, result: retrieved.image) : nil
        return EncodedResult(body: ByteBuffer(bytes: body), format: format, etag: etag(for: canonical, validator: info.validator, format: format),
                             lastModified: info.lastModified, tier: tier, expires: .now + lifetime, debug: debug, fallbackStatus: fallbackStatus)
    }

    /// The images of a URL's watermark and frame steps (thumbor's `watermark(url,…)` and
    /// `frame(url)`), each fetched as a source is: checked by the source guard and the allowed
    /// sources, through the same loaders and caches (first frame only). One that is refused or
    /// cannot be loaded answers 400, as thumbor answers a watermark it cannot load.
    private func urlImages(_ urls: [String]) async throws -> [String: AlcedoImage] {
        var images: [String: AlcedoImage] = [:]
        for text in urls where images[text] == nil {
            do {
                let url = try pipeline.sourceGuard.checkSource(text)
                images[text] = try await pipeline.manager.retrieveImage(with: url, options: [.onlyLoadFirstFrame]).image
            } catch {
                throw ErrorStatus.Thrown(status: ErrorStatus(status: 400, reason: "the image \(text) could not be loaded: \(ErrorStatus(error).reason)"))
            }
        }
        return images
    }

    /// imgproxy's debug headers for a result: the source's size in bytes and pixels (read
    /// from its header, downloaded now or kept on disk) and the result's size in pixels.
    private func debugFacts(source: String, original: Data?, result: AlcedoImage) async -> DebugFacts {
        var data = original
        if data == nil { data = try? await pipeline.cache.retrieveDataInDiskCache(forKey: source)?.data }
        let info = data.flatMap { try? ImageCodecRegistry.shared.info(for: $0, options: DecodingOptions(limits: configuration.decodingLimits)) }
        return DebugFacts(originBytes: data?.count, originWidth: info?.width, originHeight: info?.height,
                          resultWidth: result.width, resultHeight: result.height)
    }

    /// The decoding limits a URL's security options set (`nil`: the server's).
    func decodingLimits(for security: ProcessingOptions.SecurityLimits) -> DecodingLimits? {
        // max_animation_frame_resolution is checked on the decoded animation (``ImgproxyProcessor``):
        // imgproxy holds only animations to it, not still images.
        guard let megapixels = security.maxSourceResolution else { return nil }
        var limits = configuration.decodingLimits
        limits.maxPixelCount = max(1, Int(megapixels * 1_000_000))
        limits.maxTotalBytes = limits.maxPixelCount * 4
        return limits
    }

    /// `Content-Disposition` as imgproxy writes it: `inline` (or `attachment`), the file name
    /// from `filename` or the source URL's last path segment (`image` when it has none), with
    /// the result format's extension.
    static func contentDisposition(source: String, filename: String?, format: ImageFormat?, attachment: Bool) -> String {
        var path = source
        if let end = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = String(path[..<end]) }
        var last = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        if let scheme = path.range(ofLiteral: "://"), path[scheme.upperBound...].firstIndex(of: "/") == nil { last = "" }
        var stem = last, ext = ""
        if let dot = last.lastIndex(of: "."), dot != last.startIndex {
            stem = String(last[..<dot])
            ext = String(last[dot...])
        }
        if let filename, !filename.isEmpty { stem = filename }
        if let format { ext = "." + format.preferredFileExtension }
        if stem.isEmpty { stem = "image" }
        let safe = stem.replacing(literal: "\"", with: "%22")
            .unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "_" : String($0) }.joined()
        return (attachment ? "attachment" : "inline") + "; filename=\"" + safe + ext + "\""
    }

    /// `raw`: the source's response streamed as it arrives (see ``SourceStream`` for what is
    /// passed through and which limits still apply).
    private func rawResponse(_ parsed: ImgproxyPath, url: URL, request: Request) async throws -> Response {
        guard await admission.acquire(onQueued: { metrics.enterQueue() }, onDequeued: { metrics.leaveQueue() }) else {
            throw ErrorStatus.Thrown(status: .queueFull)
        }
        defer { admission.release() }
        let deadline = ContinuousClock.now + configuration.downloadTimeout
        let stream = SourceStream(downloader: pipeline.downloader, sourceGuard: pipeline.sourceGuard,
                                  timeout: configuration.downloadTimeout, maximumRedirects: configuration.maxRedirects,
                                  userAgent: configuration.userAgent)
        let opened = try await stream.open(url, clientHeaders: request.headers)
        var limit = configuration.maxSourceBytes
        if let own = parsed.options.security.maxSourceFileSize, own > 0 { limit = min(limit, own) }
        let length = opened.headers["Content-Length"].flatMap { Int($0.trimmingSpaces()) }
        if let length, length > limit {
            throw ErrorStatus.Thrown(status: ErrorStatus(status: 422, reason: "the source is \(length) bytes, over the limit of \(limit)"))
        }
        var headers = HTTPFields()
        for name in SourceStream.responseHeaders {
            if let value = opened.headers[name], let field = HTTPField.Name(name) { headers[field] = value }
        }
        if let length { headers[.contentLength] = String(length) }
        headers[.cacheControl] = cacheControl
        addCanonicalLink(to: &headers, source: url)
        if (200..<300).contains(opened.status) {
            let format = ImageFormat.allCases.first { $0.mimeType == opened.headers["Content-Type"]?.split(separator: ";").first?.lowercased() }
            headers[.contentDisposition] = Self.contentDisposition(source: parsed.sourceURL, filename: parsed.options.filename,
                                                                   format: format, attachment: parsed.options.returnAttachment)
        }
        let body = request.method == .head ? ResponseBody() : SourceStream.responseBody(opened.body, limit: limit, deadline: deadline)
        return Response(status: HTTPResponse.Status(code: opened.status), headers: headers, body: body)
    }

    /// `skip_processing`: the source's bytes as they are, for a source in one of its formats
    /// when the URL asks for no other format, after the pixel limit is checked.
    /// - Returns: `nil` when the source is processed as usual.
    private func unprocessedResponse(_ parsed: ImgproxyPath, url: URL, request: Request) async throws -> Response? {
        if let requested = parsed.requestedFormat, !parsed.options.skipProcessing.contains(requested) {
            return nil
        }
        guard await admission.acquire(onQueued: { metrics.enterQueue() }, onDequeued: { metrics.leaveQueue() }) else {
            throw ErrorStatus.Thrown(status: .queueFull)
        }
        defer { admission.release() }
        var download = DownloadOptions()
        if let limit = parsed.options.security.maxSourceFileSize, limit > 0 { download.maximumBodySize = limit }
        let downloaded = try await pipeline.downloader.downloadData(with: url, options: download)
        let data = downloaded.data
        if let limit = parsed.options.security.maxSourceFileSize, limit > 0, data.count > limit {
            throw ErrorStatus.Thrown(status: ErrorStatus(status: 422, reason: "the source is \(data.count) bytes, over the URL's max_src_file_size of \(limit)"))
        }
        let format = ImageFormat.sniff(data)
        guard parsed.options.skipProcessing.contains(format) || (format == .apng && parsed.options.skipProcessing.contains(.png)),
              parsed.requestedFormat == nil || parsed.requestedFormat == format else { return nil }
        let info = try ImageCodecRegistry.shared.info(for: data)
        let limits = decodingLimits(for: parsed.options.security) ?? configuration.decodingLimits
        try limits.check(width: info.width, height: info.height, format: format)
        metrics.sourceBytes.increment(by: Int64(data.count))
        var headers = HTTPFields()
        headers[.cacheControl] = cacheControl
        headers[.contentType] = downloaded.response.headers["Content-Type"] ?? format.mimeType
        headers[.contentLength] = String(data.count)
        if let etag = downloaded.cacheInfo.etag { headers[.eTag] = etag }
        if let lastModified = downloaded.cacheInfo.lastModified { headers[.lastModified] = lastModified }
        addCanonicalLink(to: &headers, source: url)
        headers[.contentDisposition] = Self.contentDisposition(source: parsed.sourceURL, filename: parsed.options.filename,
                                                               format: format == .unknown ? nil : format,
                                                               attachment: parsed.options.returnAttachment)
        let body: ResponseBody = request.method == .head ? ResponseBody() : ResponseBody(byteBuffer: ByteBuffer(bytes: data))
        return Response(status: .ok, headers: headers, body: body)
    }

    /// Whether every format `encoding` can end in embeds an ICC profile (JPEG, PNG, WebP; GIF
    /// for a GIF source, which seldom carries one).
    static func embedsColorProfile(_ encoding: ResponseEncoding) -> Bool {
        let embedding: Set<ImageFormat> = [.jpeg, .png, .webp]
        if let requested = encoding.requested {
            return embedding.contains(requested) && !encoding.enforced.avif && !encoding.enforced.jxl
        }
        return !encoding.accepted.avif && !encoding.accepted.jxl
            && encoding.preferredFormats.allSatisfy { embedding.contains($0) || $0 == .gif }
    }

    /// Whether a result asked for in `format` is made from the source's first frame only (the
    /// format cannot animate, so the other frames are not even decoded).
    static func writesFirstFrameOnly(_ format: ImageFormat) -> Bool {
        format == .jpeg || format == .png || format == .tiff || format == .bmp || format == .ico || format == .heic
    }

    /// The format a response will have, known before processing: `nil` when it depends on
    /// whether the source is animated and that is not known yet.
    static func predictedFormat(_ encoding: ResponseEncoding, source: SourceInfo, page: Int?, stillOnly: Bool = false) -> ImageFormat? {
        let animated = page != nil || stillOnly ? false : source.animated
        if let requested = encoding.requested {
            if encoding.enforced.jxl, requested != .jxl {
                guard let animated else { return nil }
                if !animated { return .jxl }
            }
            if encoding.enforced.avif, requested != .avif {
                guard let animated else { return nil }
                if !animated { return .avif }
            }
            return encoding.enforced.webP ? .webp : requested
        }
        // A PNG answered as JPEG depends on the result's pixels.
        if encoding.pngToJPEG, source.format == .png { return nil }
        return encoding.negotiation.outputFormat(source: source.format, animated: animated, accepted: encoding.accepted)
    }

    /// Encodes with the encoding's quality for `format`, writing transparency to JPEG and GIF as
    /// the encoding's ``AlphaConversion`` says (for JPEG, by default, flattened onto the
    /// background, white unless set), and lowering the quality of JPEG, WebP and AVIF until the result
    /// fits `maxBytes` on the encoding's ``MaxBytesSchedule``. AVIF is written at the encoding's speed.
    static func encode(_ image: AlcedoImage, as format: ImageFormat, encoding: ResponseEncoding) throws(AlcedoError) -> Data {
        var image = image
        if format == .jpeg || format == .gif, image.hasAlpha {
            switch (format, encoding.alphaConversion) {
            case (.jpeg, .flatten): image = image.flattened(over: encoding.background ?? .white)
            case (.jpeg, .drop): image = image.opaque(fromAlpha: 0)
            case (.gif, .drop): image = image.opaque(fromAlpha: 1)
            default: break
            }
        }
        var quality = encoding.quality(for: format)
        func encode(_ quality: Int) throws(AlcedoError) -> Data {
            let options = EncodingOptions(quality: quality, writesMetadata: true)
            // The AVIF encoder writes the metadata itself.
            if format == .avif { return try AVIFEncoder(speed: encoding.avifSpeed).encode(image, options: options) }
            let data: Data
            if format == .jpeg, encoding.progressiveJPEG {
                data = try JPEGEncoder(progressive: true).encode(image, options: options)
            } else if format == .png, encoding.pngInterlaced || encoding.pngPaletteColors > 0 {
                data = try encoding.pngEncoder.encode(image, options: options)
            } else if format == .webp, encoding.webpEffort != 4 || encoding.webpPreset != .default {
                // The registry's WebP encoder is libwebp's method 4 with the default preset.
                data = try WebPEncoder(method: encoding.webpEffort, preset: encoding.webpPreset).encode(image, options: options)
            } else {
                return try ImageCodecRegistry.shared.encode(image, as: format, options: options)
            }
            // The registry's `encode` writes the image's EXIF and XMP into JPEG, PNG and WebP;
            // an encoder called alone does not.
            guard options.writesMetadata, let metadata = image.metadata, !metadata.isEmpty else { return data }
            return metadata.embedded(in: data, format: format, width: image.width, height: image.height, hasAlpha: image.hasAlpha)
        }
        let first = try encode(quality)
        guard encoding.maxBytes > 0, format == .jpeg || format == .webp || format == .avif else { return first }
        var data = first
        while data.count > encoding.maxBytes {
            guard let next = encoding.maxBytesSchedule.nextQuality(after: quality, size: data.count, limit: encoding.maxBytes) else {
                return encoding.maxBytesSchedule == .thumbor ? first : data
            }
            quality = next
            data = try encode(quality)
        }
        return data
    }

    /// Runs CPU-bound work on a Dispatch thread, off Swift's cooperative pool (the admission
    /// limiter already bounds how many run at once).
    static func offPool<T: Sendable>(_ work: @escaping @Sendable () throws(AlcedoError) -> T) async throws(AlcedoError) -> T {
        let result: Result<T, AlcedoError> = await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(returning: Result { () throws(AlcedoError) -> T in try work() })
            }
        }
        return try result.get()
    }

    // MARK: Signatures

    /// Parses `path` under the configured rules (presets, default options, security options,
    /// presets-only URLs), logs its warnings, verifies its signature, and rewrites its source
    /// URL (``ImageServerConfiguration/sourceURLRewriter``).
    func parseAndVerify(_ path: String, hints: ClientHints? = nil) throws(ImgproxyURLError) -> ImgproxyPath {
        var warnings: [String] = []
        var rules = configuration.parsingRules
        if let hints { hints.apply(to: &rules.defaults) }
        var (parsed, signedPart) = try ImgproxyPath.parse(path, rules: rules, warnings: &warnings)
        for warning in warnings { Self.logger.warning("\(warning)", metadata: ["path": "\(path)"]) }
        try verifySignature(parsed.signature, signedPart: signedPart)
        if !configuration.sourceURLRewriter.isIdentity {
            parsed.sourceURL = configuration.sourceURLRewriter.rewrite(parsed.sourceURL)
        }
        return parsed
    }

    /// Checks a thumbor URL's signature (or `unsafe`) and makes its plan under the configured
    /// thumbor rules, then rewrites its source URL (``ImageServerConfiguration/sourceURLRewriter``).
    func parseAndVerify(thumbor path: ThumborPath) throws(ThumborURLError) -> ImgproxyPath {
        var rules = configuration.thumbor
        rules.defaults = configuration.defaultOptions
        var parsed = try ThumborPlan.make(path, rules: rules)
        if !configuration.sourceURLRewriter.isIdentity {
            parsed.sourceURL = configuration.sourceURLRewriter.rewrite(parsed.sourceURL)
        }
        return parsed
    }

    /// imgproxy's rule: without keys any signature segment is accepted (it holds no `:`, which
    /// the parser checked); with keys, a trusted signature or one a key made must sign the path.
    func verifySignature(_ signature: String, signedPart: String) throws(ImgproxyURLError) {
        if configuration.keys.isEmpty { return }
        if configuration.trustedSignatures.contains(signature) { return }
        guard signature != "insecure", signature != "_" else { throw .signatureRequired }
        // Every key is tried (no early exit), so timing does not tell which one matched.
        var matched = false
        for key in configuration.keys where key.verify(signature: signature, for: signedPart, size: configuration.signatureSize) {
            matched = true
        }
        guard matched else { throw .invalidSignature }
    }

    // MARK: Validators

    /// What identifies the source of `result`: its validators from the response, else those
    /// kept with the cache entry that answered (a variant found in the shared tier or a store
    /// keeps its source's, so its ETag is the one a fresh production gives), else from the
    /// original on disk, else a hash of the bytes.
    private func sourceInfo(for url: String, result: RetrieveImageResult) async -> SourceInfo {
        let format = result.image.sourceFormat
        var cacheInfo = result.response?.cacheInfo
        if cacheInfo?.hasValidators != true, result.storedCacheInfo?.hasValidators == true { cacheInfo = result.storedCacheInfo }
        if cacheInfo?.hasValidators != true, let stored = try? await pipeline.cache.diskMetadata(forKey: url) {
            cacheInfo = stored.httpCacheInfo
        }
        if let cacheInfo, let validator = cacheInfo.etag ?? cacheInfo.lastModified {
            return SourceInfo(validator: validator, lastModified: cacheInfo.lastModified, format: format)
        }
        if let data = result.originalData {
            return SourceInfo(validator: "sha256:" + Self.digest(data), lastModified: nil, format: format)
        }
        if let known = sources[url] { return known }
        if let entry = try? await pipeline.cache.retrieveDataInDiskCache(forKey: url) {
            return SourceInfo(validator: "sha256:" + Self.digest(entry.data), lastModified: nil, format: format)
        }
        // Nothing identifies the bytes: a validator of this production alone.
        return SourceInfo(validator: "unique:" + UUID().uuidString, lastModified: nil, format: format)
    }

    private func sourceInfoFromDisk(_ url: String) async -> SourceInfo? {
        guard let metadata = try? await pipeline.cache.diskMetadata(forKey: url), let info = metadata.httpCacheInfo,
              let validator = info.etag ?? info.lastModified,
              let type = info.contentType, let format = Self.format(mimeType: type) else { return nil }
        return SourceInfo(validator: validator, lastModified: info.lastModified, format: format)
    }

    private static func format(mimeType: String) -> ImageFormat? {
        let base = mimeType.split(separator: ";").first.map { $0.trimmingSpaces().lowercased() } ?? ""
        return ImageFormat.allCases.first { $0.mimeType == base }
    }

    func etag(for path: ImgproxyPath, validator: String, format: ImageFormat) -> String {
        var path = path
        path.extensionFormat = nil
        path.options.format = nil
        let text = configuration.etagBuster + validator + "\n" + path.signedPart + "\n" + format.rawValue + "\n" + String(configuration.quality(for: format))
            + (format == .avif ? "\ns" + String(configuration.avifSpeed) : "")
        return "\"" + String(Self.digest(Data(text.utf8)).prefix(32)) + "\""
    }

    /// The SHA-256 of `data` as 64 lower-case hex digits (written directly: `String(format:)`
    /// per byte cost about 15% of a cached response's CPU).
    static func digest(_ data: Data) -> String {
        let digits = Array("0123456789abcdef".utf8)
        let hash = SHA256.hash(data: data)
        return String(unsafeUninitializedCapacity: SHA256.byteCount * 2) { out in
            var index = 0
            for byte in hash {
                out[index] = digits[Int(byte >> 4)]
                out[index + 1] = digits[Int(byte & 0x0F)]
                index += 2
            }
            return index
        }
    }

    // MARK: Responses

    /// The `Last-Modified` sent for a source dated `lastModified`: no earlier than
    /// ``ImageServerConfiguration/lastModifiedBuster``.
    private func effectiveLastModified(_ lastModified: String?) -> String? {
        guard let buster = configuration.lastModifiedBuster else { return lastModified }
        if let lastModified, let date = HTTPDate.parse(lastModified), date >= buster { return lastModified }
        return HTTPDate.string(from: buster)
    }

    private func notModified(_ request: Request, etag: String, lastModified: String?) -> Bool {
        let lastModified = effectiveLastModified(lastModified)
        let tags = request.headers[values: .ifNoneMatch]
        if !tags.isEmpty {
            return configuration.useETag && tags.contains { Self.entityTags($0, match: etag) }
        }
        if configuration.useLastModified, let since = request.headers[.ifModifiedSince], let lastModified,
           let sinceDate = HTTPDate.parse(since), let modified = HTTPDate.parse(lastModified) {
            return modified <= sinceDate
        }
        return false
    }

    /// Whether the comma-separated `If-None-Match` list `field` has `*`, `etag` or `W/` + `etag`
    /// (the weak comparison of RFC 9110), read byte by byte: no substrings, no allocation.
    static func entityTags(_ field: String, match etag: String) -> Bool {
        var field = field
        var etag = etag
        return field.withUTF8 { list in
            etag.withUTF8 { tag in
                var start = 0
                while start <= list.count {
                    var end = start
                    while end < list.count && list[end] != UInt8(ascii: ",") { end += 1 }
                    var first = start, last = end
                    while first < last && (list[first] == UInt8(ascii: " ") || list[first] == UInt8(ascii: "\t")) { first += 1 }
                    while last > first && (list[last - 1] == UInt8(ascii: " ") || list[last - 1] == UInt8(ascii: "\t")) { last -= 1 }
                    if last - first == 1 && list[first] == UInt8(ascii: "*") { return true }
                    if last - first >= 2 && list[first] == UInt8(ascii: "W") && list[first + 1] == UInt8(ascii: "/") { first += 2 }
                    if last - first == tag.count && memcmp(list.baseAddress! + first, tag.baseAddress!, tag.count) == 0 { return true }
                    start = end + 1
                }
                return false
            }
        }
    }

    private func cachingHeaders(etag: String, lastModified: String?, negotiated: Bool) -> HTTPFields {
        var headers = HTTPFields()
        headers[.cacheControl] = cacheControl
        if configuration.useETag { headers[.eTag] = etag }
        if configuration.useLastModified, let lastModified = effectiveLastModified(lastModified) { headers[.lastModified] = lastModified }
        var vary: [String] = negotiated ? ["Accept"] : []
        if configuration.clientHints { vary += ClientHints.headerNames }
        if !vary.isEmpty { headers[.vary] = vary.joined(separator: ", ") }
        return headers
    }

    private func notModifiedResponse(etag: String, lastModified: String?, negotiated: Bool) -> Response {
        Response(status: .notModified, headers: cachingHeaders(etag: etag, lastModified: lastModified, negotiated: negotiated))
    }

    func errorResponse(_ error: ErrorStatus) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        headers[.init("X-Alcedo-Error")!] = error.headerValue
        if error.status == 429 { headers[.retryAfter] = "1" }
        let text = error.reason + "\n"
        headers[.contentLength] = String(text.utf8.count)
        return Response(status: HTTPResponse.Status(code: error.status), headers: headers,
                        body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}

/// A continuation resumed by the first of several racers; the others' answers are dropped.
private final class FirstAnswer<T: Sendable>: Sendable {
    private let continuation = Mutex<CheckedContinuation<T, any Error>?>(nil)

    func waiting(_ waiter: CheckedContinuation<T, any Error>) {
        continuation.withLock { $0 = waiter }
    }

    func give(_ result: Result<T, any Error>) {
        continuation.withLock { $0.take() }?.resume(with: result)
    }
}
