import Alcedo
import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A key and salt pair that signs imgproxy URLs: the signature of a path is the URL-safe
/// base64 (no padding) of HMAC-SHA256 with ``key`` over ``salt`` followed by the path after
/// the signature segment (starting with `/`), exactly as imgproxy defines it.
public struct SigningKey: Sendable, Hashable {
    /// The HMAC key (the bytes, not the hex text).
    public let key: [UInt8]
    /// The salt put before the signed path (the bytes).
    public let salt: [UInt8]

    /// Creates a key from raw bytes.
    public init(key: [UInt8], salt: [UInt8]) {
        self.key = key
        self.salt = salt
    }

    /// Creates a key from hex text, as imgproxy's `IMGPROXY_KEY`/`IMGPROXY_SALT` give them.
    /// - Throws: ``ServerConfigurationError/invalidHex(_:value:)`` when either is not hex
    ///   (an even number of `0-9a-fA-F` characters) or the key is empty.
    public init(hexKey: String, hexSalt: String) throws(ServerConfigurationError) {
        guard let key = Self.bytes(fromHex: hexKey), !key.isEmpty else { throw .invalidHex("key", value: hexKey) }
        guard let salt = Self.bytes(fromHex: hexSalt) else { throw .invalidHex("salt", value: hexSalt) }
        self.init(key: key, salt: salt)
    }

    /// The signature of `path` (which starts with `/`): URL-safe base64 without padding of the
    /// first `size` bytes of the HMAC (default 32: all of it; imgproxy's `IMGPROXY_SIGNATURE_SIZE`).
    public func signature(for path: String, size: Int = 32) -> String {
        Base64URL.encode(Array(mac(path).prefix(max(1, size))))
    }

    /// `true` when `signature` is the signature of `path` with `size` bytes of the HMAC
    /// (default 32), compared in constant time.
    public func verify(signature: String, for path: String, size: Int = 32) -> Bool {
        guard let given = Base64URL.decode(signature) else { return false }
        let expected = Array(mac(path).prefix(max(1, size)))
        guard given.count == expected.count else { return false }
        var difference: UInt8 = 0
        for index in expected.indices { difference |= expected[index] ^ given[index] }
        return difference == 0
    }

    private func mac(_ path: String) -> [UInt8] {
        var hmac = HMAC<SHA256>(key: SymmetricKey(data: key))
        hmac.update(data: salt)
        hmac.update(data: Array(path.utf8))
        return Array(hmac.finalize())
    }

    static func bytes(fromHex text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

/// URL-safe base64 (`-` and `_`, no padding), as imgproxy uses for signatures and source URLs.
enum Base64URL {
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacing(literal: "+", with: "-")
            .replacing(literal: "/", with: "_")
            .replacing(literal: "=", with: "")
    }

    /// Decodes URL-safe base64 with or without padding; `nil` for anything else.
    static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var standard = String(text).replacing(literal: "-", with: "+").replacing(literal: "_", with: "/")
        if standard.contains(literal: "=") {
            standard = String(standard.prefix { $0 != "=" })
        }
        guard standard.utf8.allSatisfy({ $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "/") || (0x30...0x39).contains($0)
            || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }) else { return nil }
        if standard.count % 4 == 1 { return nil }
        while standard.count % 4 != 0 { standard += "=" }
        guard let data = Data(base64Encoded: standard) else { return nil }
        return Array(data)
    }
}
