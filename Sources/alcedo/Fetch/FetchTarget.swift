import Alcedo
import Foundation

/// What one command-line URL names: a remote image, a local file or inline bytes.
enum FetchTarget: Sendable {
    /// An `http` or `https` URL.
    case network(URL)
    /// A `file:` URL or a plain path.
    case file(URL)
    /// The bytes of a `data:` URL, with the whole URL text as the cache key.
    case inline(Data, key: String)

    /// Parses one argument.
    ///
    /// `http://` and `https://` URLs need a host; `file:` URLs and plain paths (no scheme)
    /// name local files; `data:[<media type>][;base64],<data>` URLs carry the bytes (base64, or
    /// percent-encoded text without `;base64`). Anything else is an error that says why.
    static func parse(_ text: String) -> Result<FetchTarget, FetchTargetError> {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return .failure(FetchTargetError("an empty URL")) }
        if trimmed.lowercased().hasPrefix("data:") { return parseData(trimmed) }
        guard let schemeEnd = trimmed.firstIndex(of: ":"),
              trimmed[..<schemeEnd].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }),
              trimmed[..<schemeEnd].count > 1  // `C:` style drive letters are not schemes
        else {
            return .success(.file(URL(fileURLWithPath: trimmed)))
        }
        guard let url = URL(string: trimmed), let scheme = url.scheme?.lowercased() else {
            return .failure(FetchTargetError("not a valid URL"))
        }
        switch scheme {
        case "http", "https":
            guard let host = url.host, !host.isEmpty else { return .failure(FetchTargetError("the URL has no host")) }
            return .success(.network(url))
        case "file":
            guard !url.path.isEmpty else { return .failure(FetchTargetError("the file URL has no path")) }
            return .success(.file(URL(fileURLWithPath: url.path)))
        default:
            return .failure(FetchTargetError("unsupported scheme \"\(scheme)\" (use http, https, file or data)"))
        }
    }

    private static func parseData(_ text: String) -> Result<FetchTarget, FetchTargetError> {
        guard let comma = text.firstIndex(of: ",") else {
            return .failure(FetchTargetError("the data URL has no comma before its data"))
        }
        let header = text[text.index(text.startIndex, offsetBy: 5)..<comma].lowercased()
        let payload = String(text[text.index(after: comma)...])
        if header.split(separator: ";").contains("base64") {
            // Whitespace and URL-safe letters are accepted; missing padding is restored.
            var base64 = payload.filter { !$0.isWhitespace }
            base64 = (base64.removingPercentEncoding ?? base64)
                .replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            if base64.count % 4 != 0 { base64 += String(repeating: "=", count: 4 - base64.count % 4) }
            guard let data = Data(base64Encoded: base64) else {
                return .failure(FetchTargetError("the data URL is not valid base64"))
            }
            return .success(.inline(data, key: text))
        }
        guard let decoded = payload.removingPercentEncoding else {
            return .failure(FetchTargetError("the data URL has invalid percent-encoding"))
        }
        return .success(.inline(Data(decoded.utf8), key: text))
    }
}

extension FetchTarget {
    /// The pipeline's source: a download, a local file (read under
    /// ``AlcedoOptionsInfoItem/allowLocalFiles``, which the command-line tool sets), or the
    /// bytes as a raw provider.
    var source: Source {
        switch self {
        case .network(let url): .network(url)
        case .file(let url): .network(url)
        case .inline(let data, let key): .provider(RawImageDataProvider(data: data, cacheKey: key))
        }
    }
}

/// Why an argument is not a URL `alcedo fetch` can retrieve.
struct FetchTargetError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
