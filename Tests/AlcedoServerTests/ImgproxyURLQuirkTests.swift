import Alcedo
@testable import AlcedoServer
import Foundation
import Testing

/// What imgproxy 4 accepts in a URL besides its options, and its presets and security options.
@Suite("imgproxy URL quirks and presets")
struct ImgproxyURLQuirkTests {
    private func parse(_ path: String, rules: ImgproxyParsingRules = ImgproxyParsingRules()) throws(ImgproxyURLError) -> ImgproxyPath {
        var warnings: [String] = []
        return try ImgproxyPath.parse(path, rules: rules, warnings: &warnings).path
    }

    @Test func quirks() throws {
        // Any signature segment without a ":" (imgproxy's tests use /unsafe/); one with ":" is an option.
        #expect(try parse("/unsafe/w:10/plain/http://a.test/x").options.width == 10)
        #expect(throws: ImgproxyURLError.malformedSignature) { try parse("/w:10/plain/http://a.test/x") }
        // 3-digit hex colours.
        #expect(try parse("/unsafe/bg:f00/plain/http://a.test/x").options.background == RGBA(red: 255, green: 0, blue: 0))
        // A boolean that is not one is false, with a warning.
        var warnings: [String] = []
        let lenient = try ImgproxyPath.parse("/unsafe/el:maybe/plain/http://a.test/x", rules: ImgproxyParsingRules(), warnings: &warnings)
        #expect(!lenient.path.options.enlarge && warnings.count == 1 && warnings[0].contains("maybe"))
        // http:/host (a slash merged away by a proxy) is repaired; local:/x gets three slashes.
        #expect(try parse("/unsafe/w:10/plain/http:/a.test/x.jpg").sourceURL == "http://a.test/x.jpg")
        #expect(try parse("/unsafe/plain/https:/a.test/x.jpg").sourceURL == "https://a.test/x.jpg")
        #expect(try parse("/unsafe/plain/local:/x.jpg").sourceURL == "local:///x.jpg")
        #expect(try parse("/unsafe/plain/http://a.test/x.jpg").sourceURL == "http://a.test/x.jpg")
        // %3A in the options part.
        let escaped = try ImgproxyPath.parse("/unsafe/rs%3Afill%3A30%3A20/plain/http://a.test/x", rules: ImgproxyParsingRules(),
                                             warnings: &warnings)
        #expect(escaped.path.options.resizingType == .fill && escaped.path.options.width == 30)
        #expect(escaped.signedPart == "/rs:fill:30:20/plain/http://a.test/x", "the repaired path is what is signed")
        // A source whose unescaped URL holds a space.
        let spaced = try parse("/unsafe/plain/http://a.test/my%20cat.jpg")
        #expect(spaced.sourceURL == "http://a.test/my cat.jpg" && spaced.fetchableSourceURL == "http://a.test/my%20cat.jpg")
        #expect(try parse("/unsafe/plain/http://a.test/my cat.jpg").sourceURL == "http://a.test/my cat.jpg")
        // An empty extension is none.
        #expect(try parse("/unsafe/plain/http://a.test/x@").extensionFormat == nil)
    }

    @Test func handlingOptions() throws {
        let o = try parse("/unsafe/fn:my%20cat/att:1/cb:v3/exp:4102444800/skp:gif:svg/raw:0/kcr:1/scp:0/eth:1/fq:webp:50:avif:40/plain/http://a.test/x")
        #expect(o.options.filename == "my cat" && o.options.returnAttachment && o.options.cacheBuster == "v3")
        #expect(o.options.expires == 4_102_444_800 && o.options.skipProcessing == [.gif, .svg] && !o.options.raw)
        #expect(o.options.keepCopyright == true && o.options.stripColorProfile == false && o.options.enforceThumbnail == true)
        #expect(o.options.formatQuality == [.webp: 50, .avif: 40])
        #expect(try parse("/unsafe/fn:Y2F0LnBuZw:1/plain/http://a.test/x").options.filename == "cat.png", "base64 file name")
        #expect(throws: ImgproxyURLError.expired) { try parse("/unsafe/exp:1000/plain/http://a.test/x") }
        #expect(ImgproxyURLError.expired.status == 404 && ImgproxyURLError.expired.imgproxyStatus == 404)
        #expect(ImageService.contentDisposition(source: "http://a.test/dir/cat.png?x=1", filename: nil, format: .jpeg, attachment: false)
                == "inline; filename=\"cat.jpg\"")
        #expect(ImageService.contentDisposition(source: "http://a.test", filename: "a\"b", format: .webp, attachment: true)
                == "attachment; filename=\"a%22b.webp\"")
    }

    @Test func securityOptionsNeedPermission() throws {
        for segment in ["msr:1", "msfs:100", "maf:2", "mafr:0.5", "mrd:100", "max_result_dimension:10"] {
            #expect(throws: ImgproxyURLError.self) { try parse("/unsafe/\(segment)/plain/http://a.test/x") }
        }
        do {
            _ = try parse("/unsafe/msr:1/plain/http://a.test/x")
        } catch {
            #expect(error.status == 403 && error.description.contains("--allow-security-options"))
        }
        let allowed = try parse("/unsafe/msr:1.5/msfs:100/maf:2/mafr:0.5/mrd:100/plain/http://a.test/x",
                                rules: ImgproxyParsingRules(allowSecurityOptions: true)).options.security
        #expect(allowed.maxSourceResolution == 1.5 && allowed.maxSourceFileSize == 100 && allowed.maxAnimationFrames == 2)
        #expect(allowed.maxAnimationFrameResolution == 0.5 && allowed.maxResultDimension == 100)
    }

    @Test func presets() throws {
        var configuration = ImageServerConfiguration()
        // A preset may use one defined after it; a loop is cut.
        try configuration.addPreset("card=pr:thumb/q:70")
        try configuration.addPreset("thumb=rs:fill:64:64/pr:card")
        try configuration.addPreset("default=bg:fff/q:90")
        try configuration.validatePresets()
        let rules = configuration.parsingRules
        var warnings: [String] = []
        let card = try ImgproxyPath.parse("/unsafe/pr:card/plain/http://a.test/x", rules: rules, warnings: &warnings).path.options
        #expect(card.width == 64 && card.resizingType == .fill && card.quality == 70)
        #expect(card.background == RGBA(red: 255, green: 255, blue: 255), "the default preset applies first")
        #expect(warnings.contains { $0.contains("card") }, "the loop is reported")
        #expect(try parse("/unsafe/plain/http://a.test/x", rules: rules).options.quality == 90)
        #expect(try parse("/unsafe/q:50/plain/http://a.test/x", rules: rules).options.quality == 50, "the URL overrides the default")
        // Presets only: the first segment names presets.
        var only = rules
        only.onlyPresets = true
        #expect(try parse("/unsafe/thumb/plain/http://a.test/x", rules: only).options.width == 64)
        #expect(try parse("/unsafe/card:thumb/aHR0cDovL2EudGVzdC94", rules: only).options.width == 64)
        #expect(throws: ImgproxyURLError.presetsOnly("w")) { try parse("/unsafe/w/plain/http://a.test/x", rules: only) }
        var broken = ImageServerConfiguration()
        try broken.addPreset("a=pr:missing")
        #expect(throws: ServerConfigurationError.self) { try broken.validatePresets() }
    }

    @Test func preferredFormats() {
        let negotiation = FormatNegotiation()
        let none = AcceptedImageFormats()
        #expect(negotiation.outputFormat(source: .webp, animated: false, alpha: false, accepted: none) == .jpeg)
        #expect(negotiation.outputFormat(source: .webp, animated: false, alpha: true, accepted: none) == .png)
        #expect(negotiation.outputFormat(source: .webp, animated: true, alpha: false, accepted: none) == .gif)
        #expect(negotiation.outputFormat(source: .heic, animated: false, alpha: false, accepted: none) == .jpeg)
        #expect(negotiation.outputFormat(source: .tiff, animated: false, alpha: true, accepted: none) == .png)
        #expect(negotiation.outputFormat(source: .png, animated: false, accepted: none) == .png)
        #expect(negotiation.outputFormat(source: .webp, animated: false, accepted: AcceptedImageFormats(webP: true)) == .webp)
        let webpFirst = FormatNegotiation(autoWebP: false, preferredFormats: [.webp, .jpeg])
        #expect(webpFirst.outputFormat(source: .avif, animated: false, alpha: true, accepted: none) == .webp)
        #expect(webpFirst.outputFormat(source: .png, animated: false, alpha: false, accepted: none) == .webp)
    }

    /// Every URL the builder makes from random options parses back to the same options.
    @Test func builderRoundTripsRandomOptions() throws {
        var random = SeededRandom(seed: 19)
        let segments = ["mw:10", "mh:20", "z:0.5", "z:1.5:2", "ex:1:so:10:20", "exar:1:we", "exar:1", "g:no::5", "g:ea:20",
                        "c:50:50:ce:0.1:0.1", "t:12:f00:1:0", "t:5", "pd:1:2:3:4", "pd:7", "fl:1", "fl::1", "pix:4",
                        "wm:0.5:re:10:10:0.2", "wm:1:fp:0.3:0.7", "wm:0.7:soea:5", "fq:webp:50", "kcr:0", "scp:1", "eth:1",
                        "skp:gif:png", "raw:1", "exp:4102444800", "fn:cat", "att:1", "mrd:300", "msr:2", "maf:3",
                        "rs:fill:10:20:1:1:nowe:3:4", "dpr:2", "bg:0f0", "cb:x"]
        let rules = ImgproxyParsingRules(allowSecurityOptions: true)
        for _ in 0..<500 {
            var path = "/unsafe"
            for _ in 0..<Int.random(in: 1...6, using: &random) { path += "/" + segments.randomElement(using: &random)! }
            path += "/plain/http://a.test/x.jpg"
            let parsed = try parse(path, rules: rules)
            let rebuilt = ImgproxyURLBuilder().url(for: parsed)
            let again = try parse(rebuilt, rules: rules)
            #expect(again.options == parsed.options, "\(path) -> \(rebuilt)")
        }
    }
}
