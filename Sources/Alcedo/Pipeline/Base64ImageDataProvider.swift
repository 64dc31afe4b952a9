import Foundation

/// An image given as a base64 string, alone or as a `data:` URI
/// (`data:image/png;base64,iVBORw0…`).
///
/// White space and line breaks are ignored and missing `=` padding is accepted; any other
/// character that is not base64 makes ``data()`` throw
/// ``ImageSettingErrorReason/invalidBase64(cacheKey:length:)``, never crash.
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
            throw .imageSettingError(reason: .invalidBase64(cacheKey: cacheKey, length: base64String.count))
        }
        return data
    }

    /// The bytes of `text` (a `data:` URI prefix, white space and missing padding allowed),
    /// or `nil` when it is not base64.
    static func decode(_ text: String) -> Data? {
        var body = Substring(text)
        if body.hasPrefix("data:") {
            guard let comma = body.firstIndex(of: ","), body[..<comma].hasSuffix(";base64") else { return nil }
            body = body[body.index(after: comma)...]
        }
        var compact = String(body.unicodeScalars.filter { !CharacterSet.whitespacesAndNewlines.contains($0) })
        guard !compact.isEmpty else { return nil }
        switch compact.utf8.count % 4 {
        case 2: compact += "=="
        case 3: compact += "="
        case 1: return nil
        default: break
        }
        return Data(base64Encoded: compact)
    }
}
