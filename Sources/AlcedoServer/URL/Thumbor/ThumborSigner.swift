import Alcedo
import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Signs and verifies thumbor URLs as thumbor 7.8 and libthumbor do: the signature of a URL is
/// the URL-safe base64 (with `=` padding) of HMAC-SHA1 keyed with the security key (its UTF-8
/// bytes) over the path after the signature segment, without its leading `/`
/// (`300x200/smart/example.com/a.jpg`), as it is sent.
public struct ThumborSigner: Sendable, Hashable {
    /// The security key's bytes.
    public let key: [UInt8]

    /// A signer for thumbor's `SECURITY_KEY` (the text, as thumbor reads it).
    public init(securityKey: String) {
        key = Array(securityKey.utf8)
    }

    /// The signature of `path` (the part after the signature segment, without a leading `/`).
    public func signature(for path: String) -> String {
        Base64URL.encode(mac(path)) + "="
    }

    /// A whole signed path for `path` (without a leading `/`): `/SIGNATURE/path`.
    public func signedPath(_ path: String) -> String {
        "/" + signature(for: path) + "/" + path
    }

    /// `true` when `signature` (as it appears in the URL, percent-escapes allowed) signs `path`,
    /// compared in constant time.
    public func verify(signature: String, for path: String) -> Bool {
        let given = Array((signature.percentDecoded ?? signature).utf8)
        let expected = Array(self.signature(for: path).utf8)
        guard given.count == expected.count else { return false }
        var difference: UInt8 = 0
        for index in expected.indices { difference |= expected[index] ^ given[index] }
        return difference == 0
    }

    private func mac(_ path: String) -> [UInt8] {
        Array(HMAC<Insecure.SHA1>.authenticationCode(for: Array(path.utf8), using: SymmetricKey(data: key)))
    }
}
