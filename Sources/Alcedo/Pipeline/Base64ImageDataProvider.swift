#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An image given as a base64 string, alone or as a `data:` URI
/// (`data:image/png;base64,iVBORw0…`).
///
/// White space and line breaks are ignored, the URL-safe alphabet (`-`, `_`) and missing `=`
/// padding are accepted; any other character, or `=` anywhere but at the end, makes ``data()`` throw
/// ``ImageSettingErrorReason/DataProviderFailure/invalidBase64(cacheKey:length:)``, never crash.
public struct Base64ImageDataProvider: ImageDataProvider {
    /// The string as given.
    public let base64String: String
    /// The key the image is cached under.
    public let cacheKey: String

    /// A provider of the image encoded in `base64String`, cached under `cacheKey`.
    public init(base64String: String, cacheKey: String) {
        self.base64String = base64String
        self.cacheKey = cacheKey
    }

    public func data() async throws(AlcedoError) -> Data {
        guard let data = Self.decode(base64String) else {
            throw .imageSettingError(reason: .dataProviderError(
                provider: self, error: ImageSettingErrorReason.DataProviderFailure.invalidBase64(cacheKey: cacheKey, length: base64String.count)))
        }
        return data
    }

    /// Decodes the string and calls `handler` at once, on the calling thread (as Kingfisher's does).
    public func data(handler: @escaping @Sendable (Result<Data, any Error>) -> Void) {
        if let data = Self.decode(base64String) {
            handler(.success(data))
        } else {
            handler(.failure(AlcedoError.imageSettingError(reason: .dataProviderError(
                provider: self, error: ImageSettingErrorReason.DataProviderFailure.invalidBase64(cacheKey: cacheKey, length: base64String.count)))))
        }
    }

    /// The bytes of `text` (a `data:` URI prefix, white space and missing padding allowed),
    /// or `nil` when it is not base64.
    static func decode(_ text: String) -> Data? {
        var body = Substring(text)
        if body.hasPrefix("data:") {
            guard let comma = body.firstIndex(of: ","), body[..<comma].hasSuffix(";base64") else { return nil }
            body = body[body.index(after: comma)...]
        }
        // Only the base64 alphabet (or its URL-safe variant), with `=` at the very end.
        var symbols: [UInt8] = []
        symbols.reserveCapacity(body.utf8.count)
        for byte in body.utf8 {
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D: continue
            case UInt8(ascii: "-"): symbols.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): symbols.append(UInt8(ascii: "/"))
            default: symbols.append(byte)
            }
        }
        let padding = symbols.reversed().prefix { $0 == UInt8(ascii: "=") }.count
        guard padding <= 2 else { return nil }
        let payload = symbols.dropLast(padding)
        guard !payload.isEmpty, payload.allSatisfy(Self.isBase64Symbol) else { return nil }
        var compact = String(decoding: payload, as: UTF8.self)
        switch payload.count % 4 {
        case 1: return nil
        case 2: compact += "=="
        case 3: compact += "="
        default: break
        }
        return Data(base64Encoded: compact)
    }

    private static func isBase64Symbol(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"): return true
        default: return false
        }
    }
}
