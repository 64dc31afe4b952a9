import Alcedo
@testable import AlcedoServer
import Testing

@Suite("Signatures")
struct SignatureTests {
    /// imgproxy's documented example: key "secret" (hex 736563726574), salt "hello" (hex 68656C6C6F).
    static let documentedPath = "/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png"
    static let documentedSignature = "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8"

    @Test func documentedExampleGivesTheDocumentedSignature() throws {
        let key = try SigningKey(hexKey: "736563726574", hexSalt: "68656C6C6F")
        #expect(key.signature(for: Self.documentedPath) == Self.documentedSignature)
        #expect(key.verify(signature: Self.documentedSignature, for: Self.documentedPath))
    }

    @Test func documentedExampleParses() throws {
        let (parsed, signed) = try ImgproxyPath.parse("/" + Self.documentedSignature + Self.documentedPath)
        #expect(signed == Self.documentedPath)
        #expect(parsed.sourceURL == "http://example.com/images/curiosity.jpg")
        #expect(parsed.options.resizingType == .fill)
        #expect(parsed.options.width == 300 && parsed.options.height == 400)
        #expect(parsed.options.gravity == .compass(.smart, xOffset: 0, yOffset: 0))
        #expect(parsed.extensionFormat == .png)
    }

    @Test func wrongSignaturesAreRejected() throws {
        let key = try SigningKey(hexKey: "736563726574", hexSalt: "68656C6C6F")
        var tampered = Array(Self.documentedSignature)
        tampered[5] = tampered[5] == "A" ? "B" : "A"
        #expect(!key.verify(signature: String(tampered), for: Self.documentedPath))
        #expect(!key.verify(signature: Self.documentedSignature, for: Self.documentedPath + "x"))
        #expect(!key.verify(signature: "", for: Self.documentedPath))
        #expect(!key.verify(signature: "not base64!", for: Self.documentedPath))
        #expect(!key.verify(signature: String(Self.documentedSignature.dropLast(4)), for: Self.documentedPath))
        let other = try SigningKey(hexKey: "736563726575", hexSalt: "68656C6C6F")
        #expect(!other.verify(signature: Self.documentedSignature, for: Self.documentedPath))
    }

    @Test func keysMustBeHex() {
        #expect(throws: ServerConfigurationError.self) { try SigningKey(hexKey: "xyz", hexSalt: "00") }
        #expect(throws: ServerConfigurationError.self) { try SigningKey(hexKey: "", hexSalt: "00") }
        #expect(throws: ServerConfigurationError.self) { try SigningKey(hexKey: "00", hexSalt: "123") }
    }

    @Test func builderSignsWithTheFirstKey() throws {
        let key = try SigningKey(hexKey: "736563726574", hexSalt: "68656C6C6F")
        let builder = ImgproxyURLBuilder(baseURL: "https://img.example.com/", key: key)
        var options = ProcessingOptions()
        options.resizingType = .fill
        options.width = 300
        let url = builder.url(for: "https://example.com/a@b.jpg?x=1&y=%41", options: options, format: .webp)
        #expect(url.hasPrefix("https://img.example.com/"))
        let path = String(url.dropFirst("https://img.example.com".count))
        let (parsed, signed) = try ImgproxyPath.parse(path)
        #expect(key.verify(signature: parsed.signature, for: signed))
        #expect(parsed.sourceURL == "https://example.com/a@b.jpg?x=1&y=%41")
        #expect(parsed.extensionFormat == .webp)
        #expect(ImgproxyURLBuilder().url(for: "https://example.com/a.jpg").hasPrefix("/insecure/plain/"))
    }
}
