import Alcedo
@testable import AlcedoServer
import Testing

/// thumbor's URL grammar, signatures and the plans its URLs make (cases from libthumbor's
/// tests/test_url.py and thumbor's tests/test_url.py).
@Suite("thumbor URLs")
struct ThumborURLTests {
    @Test("every part of the grammar is read")
    func fullGrammar() throws {
        let path = try ThumborPath.parse("/unsafe/debug/meta/trim:bottom-right:10/10x20:30x40/adaptive-full-fit-in/-300x-orig/right/bottom/smart/filters:brightness(10):quality(50)/example.com/a/b.jpg")
        #expect(path.unsafe && path.signature == nil && path.debug && path.meta)
        #expect(path.trim == ThumborPath.Trim(bottomRight: true, tolerance: 10))
        #expect(path.crop == ThumborCrop(left: 10, top: 20, right: 30, bottom: 40))
        #expect(path.fitIn && path.adaptive && path.full)
        #expect(path.width == 300 && path.height == nil && path.horizontalFlip && path.verticalFlip)
        #expect(path.horizontalAlign == .right && path.verticalAlign == .bottom && path.smart)
        #expect(path.filters == "brightness(10):quality(50)")
        #expect(try ThumborPath.parse("/unsafe/filters:curve(%5B(0,0)%5D,%5B%5D,%5B%5D,%5B%5D)/a.com/b.jpg").filters == "curve([(0,0)],[],[],[])")
        #expect(path.image == "example.com/a/b.jpg")
    }

    @Test("optional parts never leave the image empty, as the regular expression backtracks")
    func backtracking() throws {
        #expect(try ThumborPath.parse("/unsafe/300x200/").image == "300x200/")
        #expect(try ThumborPath.parse("/unsafe/300x200/").width == 0)
        #expect(try ThumborPath.parse("/unsafe/smart/").image == "smart/")
        let filters = try ThumborPath.parse("/unsafe/filters:watermark(http://x.com/w.png,0,0,0)/y.com/i.jpg")
        #expect(filters.filters == "watermark(http://x.com/w.png,0,0,0)" && filters.image == "y.com/i.jpg")
        #expect(try ThumborPath.parse("/unsafe/x/a.jpg").width == 0)
        #expect(try ThumborPath.parse("/abc/a.jpg").signature == "abc")
        // "unsafe/" is then the image, and the URL has neither unsafe nor a signature.
        #expect(throws: ThumborURLError.hashOrUnsafe) { try ThumborPlan.make(ThumborPath.parse("/unsafe/"), rules: ThumborRules()) }
        #expect(throws: ThumborURLError.noImage) { try ThumborPath.parse("/") }
        #expect(throws: ThumborURLError.numberOutOfRange("99999999")) { try ThumborPath.parse("/unsafe/99999999x1/a.jpg") }
    }

    @Test("signatures are HMAC-SHA1 in URL-safe base64 with padding, as libthumbor signs")
    func signatures() throws {
        // libthumbor's README: key "my-security-key", path "300x200/smart/my.server.com/some/path/to/image.jpg".
        let signer = ThumborSigner(securityKey: "my-security-key")
        let signature = signer.signature(for: "300x200/smart/my.server.com/some/path/to/image.jpg")
        #expect(signature.count == 28 && signature.hasSuffix("="))
        #expect(signer.verify(signature: signature, for: "300x200/smart/my.server.com/some/path/to/image.jpg"))
        #expect(!signer.verify(signature: signature, for: "300x201/smart/my.server.com/some/path/to/image.jpg"))
        #expect(signer.verify(signature: signature.replacing("=", with: "%3D"), for: "300x200/smart/my.server.com/some/path/to/image.jpg"))
        var rules = ThumborRules()
        rules.securityKey = "my-security-key"
        let signed = try ThumborPath.parse(signer.signedPath("300x200/smart/my.server.com/some/path/to/image.jpg"))
        #expect(try ThumborPlan.make(signed, rules: rules).sourceURL == "http://my.server.com/some/path/to/image.jpg")
        let forged = try ThumborPath.parse("/" + String(repeating: "A", count: 27) + "=/300x200/a.com/b.jpg")
        #expect(throws: ThumborURLError.invalidSignature) { try ThumborPlan.make(forged, rules: rules) }
        rules.allowUnsafe = false
        #expect(throws: ThumborURLError.unsafeNotAllowed) { try ThumborPlan.make(ThumborPath.parse("/unsafe/a.com/b.jpg"), rules: rules) }
    }

    @Test("plans: crop mode is thumbor's crop and enlarges, fit-in fits, full-fit-in covers, flips keep the alignment (the window is chosen before them)")
    func plans() throws {
        func plan(_ path: String) throws -> ProcessingOptions { try ThumborPlan.make(ThumborPath.parse(path), rules: ThumborRules()).options }
        let crop = try plan("/unsafe/300x200/left/top/a.com/b.jpg")
        #expect(crop.thumborCrop && crop.enlarge && crop.gravity == .compass(.northWest, xOffset: 0, yOffset: 0))
        let fit = try plan("/unsafe/fit-in/300x200/a.com/b.jpg")
        #expect(fit.resizingType == .fit && !fit.enlarge && !fit.thumborCrop)
        let full = try plan("/unsafe/adaptive-full-fit-in/300x200/a.com/b.jpg")
        #expect(full.resizingType == .cover && full.enlarge && full.adaptiveOrientation)
        let flipped = try plan("/unsafe/-300x200/left/a.com/b.jpg")
        #expect(flipped.flipHorizontal && flipped.gravity == .compass(.west, xOffset: 0, yOffset: 0))
        let region = try plan("/unsafe/10x20:30x40/a.com/b.jpg")
        #expect(region.region == ProcessingOptions.Region(left: 10, top: 20, right: 30, bottom: 40))
        let filtered = try plan("/unsafe/filters:quality(50):format(webp):grayscale():brightness(-10):no_upscale():max_age(60):nope(1)/a.com/b.jpg")
        #expect(filtered.quality == 50 && filtered.format == .webp && filtered.steps == [.levels(.grayscale), .levels(.brightness(percent: -10))])
        #expect(!filtered.enlarge && filtered.maxAge == 60)
        // rotate, proportion and upscale act on what the steps before them left, in URL order.
        let rotated = try plan("/unsafe/300x200/filters:rotate(90)/a.com/b.jpg")
        #expect(rotated.rotate == 0 && rotated.width == 300 && rotated.height == 200 && rotated.steps == [.rotate(degrees: 270)])
        let ordered = try plan("/unsafe/fit-in/300x200/filters:noise(5,1):proportion(0.5):rotate(180):upscale():rotate(360)/a.com/b.jpg")
        #expect(ordered.steps == [.effect(.noise(amount: 5, seed: 1)), .proportion(0.5), .rotate(degrees: 180), .upscale])
        #expect(ordered.zoomX == 1 && ordered.zoomY == 1 && !ordered.enlarge)
        // upscale() is bounded as any other result: its size is reserved and over the limit refused.
        let huge = ImgproxyProcessor(options: try plan("/unsafe/fit-in/60000x60000/filters:upscale()/a.com/b.jpg"))
        #expect(huge.outputSize(for: PixelSize(width: 300, height: 200)) == PixelSize(width: 8192, height: 8192))
        #expect(throws: AlcedoError.self) { try huge.process(AlcedoImage(width: 30, height: 20, pixels: [UInt8](repeating: 255, count: 30 * 20 * 4))) }
        let small = ImgproxyProcessor(options: try plan("/unsafe/fit-in/600x400/filters:upscale()/a.com/b.jpg"))
        #expect(small.outputSize(for: PixelSize(width: 300, height: 200)) == PixelSize(width: 600, height: 400))
    }

    @Test("image parts become the URLs thumbor's HTTP loader fetches")
    func sources() {
        #expect(ThumborPlan.sourceURL("a.com/b c.jpg") == "http://a.com/b%20c.jpg")
        #expect(ThumborPlan.sourceURL("https://a.com/b.jpg?x=1") == "https://a.com/b.jpg?x=1")
        #expect(ThumborPlan.sourceURL("a.com/b%20c.jpg") == "http://a.com/b%20c.jpg")
        #expect(ThumborPlan.sourceURL("s3://bucket/key.jpg") == "s3://bucket/key.jpg")
    }

    @Test("thumbor.conf: plain assignments are read, nothing is run")
    func configFile() {
        let file = ThumborConfigFile(text: """
            # thumbor.conf
            SECURITY_KEY = 'secret' # the key
            ALLOW_UNSAFE_URL = False
            QUALITY = 85
            MAX_PIXELS = 75e6
            FILTERS = [
                'thumbor.filters.brightness',
                "thumbor.filters.quality",
            ]
            ALLOWED_SOURCES = ('example.com', 'cdn.example.com')
            import os
            RESULT_STORAGE = os.environ['X']
            WEBP_QUALITY = None
            """)
        #expect(file.values["SECURITY_KEY"] == .string("secret"))
        #expect(file.values["ALLOW_UNSAFE_URL"] == .bool(false))
        #expect(file.values["QUALITY"] == .number(85))
        #expect(file.values["MAX_PIXELS"] == .number(75e6))
        #expect(file.values["FILTERS"] == .list([.string("thumbor.filters.brightness"), .string("thumbor.filters.quality")]))
        #expect(file.values["ALLOWED_SOURCES"]?.description == "example.com,cdn.example.com")
        #expect(file.values["WEBP_QUALITY"] == ThumborConfigFile.Value.none)
        #expect(file.values["RESULT_STORAGE"] == nil)
        #expect(file.skippedLines == [11, 12])
    }

    @Test("level adjustments are thumbor's integer arithmetic")
    func levels() throws {
        let image = AlcedoImage(width: 1, height: 1, pixels: [100, 150, 200, 255])
        #expect(try LevelsImageProcessor(.brightness(percent: 10)).process(image).frames[0].pixels == [125, 175, 225, 255])
        #expect(try LevelsImageProcessor(.rgb(red: -50, green: 0, blue: 30)).process(image).frames[0].pixels == [0, 150, 255, 255])
        // (40 + 100)² / 100 = 196: 196 * (100 - 128) / 100 + 128 = 74 (C division truncates).
        #expect(try LevelsImageProcessor(.contrast(percent: 40)).process(image).frames[0].pixels == [74, 171, 255, 255])
        // Past ±100 the same arithmetic: (-200 + 100)² / 100 = 100 leaves the image as it is; -150 gives 25.
        #expect(try LevelsImageProcessor(.contrast(percent: -200)).process(image).frames[0].pixels == [100, 150, 200, 255])
        #expect(try LevelsImageProcessor(.contrast(percent: -150)).process(image).frames[0].pixels == [121, 133, 146, 255])
        #expect(try LevelsImageProcessor(.contrast(percent: 200)).process(image).frames[0].pixels == [0, 255, 255, 255])
        #expect(try LevelsImageProcessor(.grayscale).process(image).frames[0].pixels == [141, 141, 141, 255])
        let composed = LevelsImageProcessor(.brightness(percent: 10)) |> LevelsImageProcessor(.grayscale)
        #expect(composed.identifier.contains("levels(brightness:10)"))
    }
}
