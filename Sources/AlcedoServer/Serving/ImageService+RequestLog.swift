import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import Hummingbird
import Logging

extension ImageService {
    /// The request-id header's name.
    static let requestIDField = HTTPField.Name(RequestID.header)!

    /// Starts the bookkeeping of an image or info request: its id (the client's valid
    /// `X-Request-ID`, else a new one), imgproxy's `requests_total` and `requests_in_progress`,
    /// and the recorder its stages go to (telling ``ImageServerConfiguration/stageObserver``).
    /// With `path`, writes imgproxy's `Started PATH` line (`request_id`, `method`, `client_ip`)
    /// when requests are logged.
    /// - Parameters:
    ///   - request: the request.
    ///   - clientIP: the client's address, for the log lines (default `nil`: not known).
    ///   - path: the path the service answers (without the prefix and the query; default `nil`:
    ///     no `Started` line).
    public func startRequest(_ request: Request, clientIP: String? = nil, path: String? = nil) -> RequestStages {
        metrics.imgproxy?.requestStarted()
        // With tracing on and no observer of the application's, stages become child spans.
        let observer = configuration.stageObserver ?? (configuration.tracesRequests ? TracingStageObserver() : nil)
        let stages = RequestStages(requestID: RequestID.accept(request.headers[Self.requestIDField]), observer: observer)
        stages.clientIP = clientIP
        let logger = configuration.logger
        if let path, configuration.logsRequests, logger.logLevel <= .info {
            var metadata: Logger.Metadata = ["request_id": .string(stages.requestID), "method": .string(request.method.rawValue)]
            if let clientIP { metadata["client_ip"] = .string(clientIP) }
            logger.info("Started \(Self.pathWithoutSignature(path))", metadata: metadata)
        }
        return stages
    }

    /// Ends the bookkeeping of a request started with ``startRequest(_:)``: sends its id back
    /// in `X-Request-ID`, records imgproxy's request metrics and the stage times, and writes the
    /// access line (see ``accessLine(method:path:status:bytes:stages:)``).
    /// - Parameters:
    ///   - request: the request.
    ///   - response: its response, given the `X-Request-ID` header.
    ///   - path: the path the service answered (without the prefix and the query).
    ///   - stages: what ``startRequest(_:)`` returned.
    public func finishRequest(_ request: Request, response: inout Response, path: String, stages: RequestStages) {
        response.headers[Self.requestIDField] = stages.requestID
        let status = Int(response.status.code)
        let duration = ContinuousClock.now - stages.start
        if let imgproxy = metrics.imgproxy {
            imgproxy.requestFinished(status: status, duration: duration, stages: stages)
            metrics.recordStages(stages)
        }
        let level: Logger.Level = status >= 500 ? .error : status >= 400 ? .warning : .info
        let logger = configuration.logger
        guard configuration.logsRequests, logger.logLevel <= level else { return }
        let bytes = response.headers[.contentLength].flatMap { Int($0) } ?? 0
        let (message, metadata) = accessLine(method: request.method.rawValue, path: path, status: status, bytes: bytes,
                                             duration: duration, stages: stages)
        logger.log(level: level, "\(message)", metadata: metadata)
    }

    /// The access line of a request, as imgproxy's `Completed in DURATION PATH` with the fields
    /// `request_id`, `method`, `path` (without the signature segment), `client_ip`, `status`, `bytes`,
    /// `duration` (seconds), `cache` (the tier that answered), `source_host`, and for a
    /// failure `error_type` (imgproxy's `errors_total` type) and `error`; `stages` holds each
    /// stage's seconds.
    func accessLine(method: String, path: String, status: Int, bytes: Int, duration: Duration,
                    stages: RequestStages) -> (String, Logger.Metadata) {
        let shown = Self.pathWithoutSignature(path)
        var metadata: Logger.Metadata = [
            "request_id": .string(stages.requestID),
            "method": .string(method),
            "path": .string(shown),
            "status": .stringConvertible(status),
            "bytes": .stringConvertible(bytes),
            "duration": .stringConvertible(Self.seconds(duration)),
        ]
        if let clientIP = stages.clientIP { metadata["client_ip"] = .string(clientIP) }
        if let tier = stages.tier { metadata["cache"] = .string(tier) }
        if let host = stages.sourceHost { metadata["source_host"] = .string(host) }
        if let failure = stages.failure {
            metadata["error_type"] = .string(failure.type)
            metadata["error"] = .string(failure.reason)
        }
        let records = stages.records
        if !records.isEmpty {
            var times: Logger.Metadata = [:]
            for record in records {
                let seconds = Self.seconds(record.duration)
                if case .stringConvertible(let earlier as Double)? = times[record.name.rawValue] {
                    times[record.name.rawValue] = .stringConvertible(earlier + seconds)
                } else {
                    times[record.name.rawValue] = .stringConvertible(seconds)
                }
            }
            metadata["stages"] = .dictionary(times)
        }
        return ("Completed in \(ImgproxyLogHandler.goDuration(duration)) \(shown)", metadata)
    }

    /// `path` without its signature segment (the first one; `/info/SIGNATURE/…` keeps `/info`),
    /// so that logs carry no signatures.
    static func pathWithoutSignature(_ path: String) -> String {
        var segments = path.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        // ["", "info", "SIG/…"] or ["", "SIG", "…"].
        if segments.count >= 3, segments[1] == "info" {
            let rest = segments[2].split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            return "/info/" + (rest.count == 2 ? String(rest[1]) : "")
        }
        guard segments.count == 3 else { return path }
        segments.remove(at: 1)
        return segments.joined(separator: "/")
    }

    /// The host of a source URL (`s3://BUCKET/…` gives the bucket; `local:///…` none).
    static func host(of source: String) -> String? {
        guard let scheme = source.range(ofLiteral: "://") else { return nil }
        let rest = source[scheme.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let host = authority.split(separator: "@").last.map(String.init) ?? ""
        return host.isEmpty ? nil : host
    }

    /// `duration` in seconds.
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Records the stages the library timed for one retrieval (``RetrieveImageMetrics``),
    /// laid out one after the other from `started`, in the order they run: the memory cache,
    /// the disk cache (the shared tiers behind it recorded themselves as they ran), the source
    /// fetch (with the origin's status and bytes), the wait for memory and a processing slot,
    /// decoding, each processing step (`process:resize`…), encoding the variant and storing.
    /// Stages that did not run are left out.
    static func recordRetrieval(_ retrieved: RetrieveImageResult, started: ContinuousClock.Instant, host: String?,
                                in stages: RequestStages) {
        let times = retrieved.metrics
        var at = started
        func add(_ name: StageName, _ duration: Duration, _ attributes: [(String, String)] = []) {
            guard duration > .zero else { return }
            stages.record(name, start: at, end: at + duration, attributes: attributes)
            at += duration
        }
        let tier: String = switch retrieved.originalCacheType {
        case .memory: "memory"
        case .disk: "disk"
        case .none: "source"
        }
        let memory = min(times.memoryCacheLookup, times.cacheLookup)
        add(.cacheMemory, memory, tier == "memory" ? [("tier", tier)] : [])
        // The shared tiers' lookups of this retrieval, recorded by themselves, are not the disk's.
        let sharedTiers: Set<StageName> = [.cacheRedis, .cacheResultStore, .cacheSourceStore]
        let shared = stages.records.reduce(Duration.zero) { sum, record in
            sharedTiers.contains(record.name) && record.start >= started ? sum + record.duration : sum
        }
        let behindMemory = times.cacheLookup - memory
        add(.cacheDisk, behindMemory - min(shared, behindMemory), [("tier", tier)])
        at += min(shared, behindMemory)
        var download: [(String, String)] = []
        if let response = retrieved.response { download.append(("origin_status", String(response.statusCode))) }
        if let data = retrieved.originalData { download.append(("bytes", String(data.count))) }
        if let host { download.append(("host", host)) }
        add(.download, times.loading, download)
        add(.memoryBudget, times.memoryWait)
        add(.decode, times.decoding)
        if times.processingSteps.isEmpty {
            add(.process, times.processing)
        } else {
            for step in times.processingSteps { add(.processor(step.name), step.duration) }
        }
        let encoding = min(times.encoding, times.storing)
        add(.encode, encoding, retrieved.variantData.map { [("format", ImageFormat.sniff($0).rawValue)] } ?? [])
        add(.store, times.storing - encoding)
    }
}

extension ErrorStatus {
    /// The type imgproxy counts an error under in `errors_total{type}`: `path_parsing`,
    /// `security`, `queue`, `timeout`, `download`, `image_data_size`, `processing` or `IO`.
    static func imgproxyType(of error: any Error) -> String {
        switch error {
        case let error as ImgproxyURLError:
            return error.status == 403 ? "security" : "path_parsing"
        case let error as ThumborURLError:
            return ErrorStatus(thumbor: error).status == 403 ? "security" : "path_parsing"
        case is SourceRefusal:
            return "security"
        case let error as AlcedoError:
            switch error {
            case .requestError(let reason):
                switch reason {
                case .invalidURL(.localFileNotAllowed), .invalidURL(.sourceNotAllowed), .emptyRequest: return "security"
                case .invalidURL(.malformed): return "path_parsing"
                case .taskCancelled, .asyncTaskContextCancelled, .dataProviderCancelled, .livePhotoTaskCancelled: return "timeout"
                default: return "download"
                }
            case .responseError(.invalidURLResponse(.bodyTooLarge)): return "image_data_size"
            case .responseError(.URLSessionError(let underlying)):
                if case .networkFailure(_, _ as SourceRefusal)? = underlying as? NetworkErrorReason { return "security" }
                return "download"
            case .responseError, .imageSettingError: return "download"
            case .processorError(let reason):
                if case .memoryBudgetExceeded(.queueFull)? = reason.cause { return "queue" }
                return "processing"
            case .cacheError: return "IO"
            }
        case let error as ErrorStatus.Thrown:
            switch error.status.status {
            case 429: return "queue"
            case 503: return "timeout"
            case 413, 422: return "image_data_size"
            case 400: return "download"
            default: return "processing"
            }
        default:
            return "processing"
        }
    }
}
