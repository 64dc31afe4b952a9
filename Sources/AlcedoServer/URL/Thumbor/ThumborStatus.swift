import Alcedo

extension ErrorStatus {
    /// The status thumbor 7.8 answers for an error (found by running it), with Alcedo's reason:
    ///
    /// - 400: a malformed, unsigned or wrongly signed URL, unsafe URLs when not allowed, a source
    ///   the allowed sources or the address guard refuse, bytes that are not an image;
    /// - 404: the origin answered any error status (thumbor's HTTP loader calls every one "not found");
    /// - 502: the origin answered an empty body;
    /// - 504: the origin timed out, its host name does not resolve, or the source URL names a
    ///   host but cannot be read as a URL (a port that is not a number: thumbor's loader tries it).
    ///
    /// Where thumbor answers 500 from an exception, Alcedo answers what the failure is: 502 for
    /// a refused or broken connection, 400 for a size too large to make (thumbor: 500 both).
    /// Everything else keeps Alcedo's status (``ErrorStatus/init(_:)``).
    init(thumbor error: any Error) {
        let general = ErrorStatus(error)
        switch error {
        case let error as ThumborURLError:
            self.init(status: error.status, reason: error.description)
        case let refusal as SourceRefusal:
            // thumbor's loader tries a URL it cannot read as long as it names a host, and
            // reports the failure as a timeout (curl's 599): 504.
            self.init(status: refusal.unreadableURL.map { Self.hasHost($0) ? 504 : 400 } ?? 400, reason: general.reason)
        case let error as AlcedoError:
            self.init(status: Self.thumborStatus(error) ?? general.status, reason: general.reason, log: general.log)
        default:
            self = general
        }
    }

    private static func thumborStatus(_ error: AlcedoError) -> Int? {
        switch error {
        case .requestError(.invalidURL(request: .malformed(let url))):
            // As for an unreadable source URL (see init): one without a host is refused before.
            return hasHost(url) ? 504 : 400
        case .requestError(.invalidURL(request: .sourceNotAllowed)),
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

    /// Whether a source URL names a host: something between `scheme://` (or the start) and the
    /// first `/`, other than credentials and a port.
    static func hasHost(_ url: String) -> Bool {
        var rest = Substring(url)
        if let scheme = rest.firstRange(of: "://") { rest = rest[scheme.upperBound...] }
        var authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if !authority.hasPrefix("["), let colon = authority.lastIndex(of: ":") { authority = authority[..<colon] }
        return !authority.isEmpty
    }
}
