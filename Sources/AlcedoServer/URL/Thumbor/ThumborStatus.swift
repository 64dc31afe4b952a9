import Alcedo

extension ErrorStatus {
    /// The status thumbor 7.8 answers for an error (found by running it), with Alcedo's reason:
    ///
    /// - 400: a malformed, unsigned or wrongly signed URL, unsafe URLs when not allowed, a source
    ///   the allowed sources or the address guard refuse, bytes that are not an image;
    /// - 404: the origin answered any error status (thumbor's HTTP loader calls every one "not found");
    /// - 502: the origin answered an empty body;
    /// - 504: the origin timed out, or its host name does not resolve.
    ///
    /// Where thumbor answers 500 from an exception, Alcedo answers what the failure is: 502 for
    /// a refused or broken connection, 400 for a size too large to make (thumbor: 500 both).
    /// Everything else keeps Alcedo's status (``ErrorStatus/init(_:)``).
    init(thumbor error: any Error) {
        let general = ErrorStatus(error)
        switch error {
        case let error as ThumborURLError:
            self.init(status: error.status, reason: error.description)
        case is SourceRefusal:
            self.init(status: 400, reason: general.reason)
        case let error as AlcedoError:
            self.init(status: Self.thumborStatus(error) ?? general.status, reason: general.reason, log: general.log)
        default:
            self = general
        }
    }

    private static func thumborStatus(_ error: AlcedoError) -> Int? {
        switch error {
        case .requestError(.invalidURL(request: .malformed)), .requestError(.invalidURL(request: .sourceNotAllowed)),
             .requestError(.invalidURL(request: .localFileNotAllowed)):
            return 400
        case .responseError(.invalidHTTPStatusCode):
            return 404
        case .responseError(.URLSessionError(let reason)):
            switch reason as? NetworkErrorReason {
            // thumbor's loader reports a failed name lookup as a timeout (curl's 599).
            case .connectTimedOut, .timedOut, .dnsFailure: return 504
            case .networkFailure(_, _ as SourceRefusal): return 400
            default: return 502
            }
        case .processorError(let reason):
            switch reason.cause {
            case .decodingFailed(let decoding)?:
                switch decoding {
                case .emptyData: return 502
                case .unsupportedFormat, .invalidHeader: return 400
                default: return nil
                }
            case .outputTooLarge?:
                return 400
            case nil:
                // A processor handed bytes that are not an image: an empty body, or another kind of file.
                guard case .processingFailed(_, .data(let data)) = reason else { return nil }
                if data.isEmpty { return 502 }
                return ImageFormat.sniff(data) == .unknown ? 400 : nil
            default:
                return nil
            }
        case .imageSettingError(.alternativeSourcesExhausted(let failures)):
            return failures.last.flatMap { thumborStatus($0.error) }
        default:
            return nil
        }
    }
}
