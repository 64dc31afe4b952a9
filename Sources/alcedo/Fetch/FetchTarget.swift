import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What one command-line URL names: a remote image, a local file or inline bytes.
enum FetchTarget: Sendable {
    /// An `http`, `https` or `s3` URL.
    case network(URL)
    /// A `file:` URL or a plain path.
    case file(URL)
    /// The bytes of a `data:` URL, with its cache key (the URL, or its SHA-256 when long).
    case inline(Data, key: String)

    /// Parses one argument.
    ///
    /// `http://` and `https://` URLs need a host; `file:` URLs and plain paths (no scheme)
    /// name local files; `data:[<media type>][;base64],<data>` URLs carry the bytes (base64, or
    /// percent-encoded text without `;base64`). Anything else is an error that says why.
    ///
    /// A `data:` URL whose bytes would be larger than `maximumDataSize` (default: the
    /// downloader's body limit, 32 MiB, as for a download) fails before anything is decoded:
    /// the size is bounded from the length of the encoded text alone.
    static func parse(_ text: String, maximumDataSize: Int = defaultMaximumDataSize) -> Result<FetchTarget, FetchTargetError> {
        // Looked at through the first bytes only: a data URL may be very long.
        let start = text.utf8.prefix(64).drop { $0 == 0x20 || $0 == 0x09 }.prefix(5)
        if start.map({ $0 | 0x20 }).elementsEqual("data:".utf8) {
            return parseData(text, maximumDataSize: maximumDataSize)
        }
        let trimmed = text.trimmingSpaces()
        guard !trimmed.isEmpty else { return .failure(FetchTargetError("an empty URL")) }
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
        case "s3":
            guard (try? S3ObjectLocation(url: url)) != nil else { return .failure(FetchTargetError("an s3 URL is s3://bucket/key")) }
            return .success(.network(url))
        default:
            return .failure(FetchTargetError("unsupported scheme \"\(scheme)\" (use http, https, s3, file or data)"))
        }
    }

    /// The cache key of a `data:` URL: the URL itself up to 1 KiB, else `data:sha256,` and
    /// the SHA-256 of the URL in hex (a key is kept in memory and in the disk entry's header).
    private static func inlineKey(_ text: String) -> String {
        text.utf8.count <= 1024 ? text : "data:sha256," + keyHasher.hash(forKey: text)
    }

    /// Used only for its SHA-256 of a key; touches nothing on disk.
    private static let keyHasher = DiskStorage.EntryStore(config: DiskStorage.EntryStore.Config(
        folderURL: FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-unused", isDirectory: true)))

    /// The body limit of a default ``ImageDownloader`` (32 MiB).
    static let defaultMaximumDataSize = ImageDownloader.Configuration().maximumBodySize

    private static func parseData(_ untrimmed: String, maximumDataSize: Int) -> Result<FetchTarget, FetchTargetError> {
        // Only the UTF-8 view is walked before the size check: no copy of a huge text.
        let utf8 = untrimmed.utf8
        guard let comma = utf8.firstIndex(of: UInt8(ascii: ",")) else {
            return .failure(FetchTargetError("the data URL has no comma before its data"))
        }
        let header = String(decoding: utf8[..<comma], as: UTF8.self).trimmingSpaces()
            .dropFirst(5).lowercased()
        let isBase64 = header.split(separator: ";").contains("base64")
        let encodedCount = utf8.distance(from: utf8.index(after: comma), to: utf8.endIndex)
        // Base64 holds 3 bytes per 4 characters; percent-encoding at least 1 byte per 3.
        let smallestSize = isBase64 ? encodedCount / 4 * 3 : (encodedCount + 2) / 3
        guard smallestSize <= maximumDataSize else {
            return .failure(FetchTargetError(
                "the data URL holds about \(smallestSize) bytes, over the limit of \(maximumDataSize) bytes"))
        }
        let text = untrimmed.trimmingSpaces()
        guard let textComma = text.firstIndex(of: ",") else {
            return .failure(FetchTargetError("the data URL has no comma before its data"))
        }
        let payload = String(text[text.index(after: textComma)...])
        if isBase64 {
            // Whitespace and URL-safe letters are accepted; missing padding is restored.
            var base64 = payload.filter { !$0.isWhitespace }
            base64 = (base64.percentDecoded ?? base64)
                .replacing(literal: "-", with: "+").replacing(literal: "_", with: "/")
            if base64.count % 4 != 0 { base64 += String(repeating: "=", count: 4 - base64.count % 4) }
            guard let data = Data(base64Encoded: base64) else {
                return .failure(FetchTargetError("the data URL is not valid base64"))
            }
            return .success(.inline(data, key: inlineKey(text)))
        }
        guard let decoded = payload.percentDecoded else {
            return .failure(FetchTargetError("the data URL has invalid percent-encoding"))
        }
        guard decoded.utf8.count <= maximumDataSize else {
            return .failure(FetchTargetError(
                "the data URL holds \(decoded.utf8.count) bytes, over the limit of \(maximumDataSize) bytes"))
        }
        return .success(.inline(Data(decoded.utf8), key: inlineKey(text)))
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
