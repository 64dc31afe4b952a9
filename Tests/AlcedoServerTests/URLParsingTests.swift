import Alcedo
@testable import AlcedoServer
import Foundation
import Testing

@Suite("imgproxy URL parsing")
struct URLParsingTests {
    private func parse(_ path: String, presets: [String: [String]] = [:]) throws(ImgproxyURLError) -> ImgproxyPath {
        try ImgproxyPath.parse(path, presets: presets).path
    }

    @Test func plainAndBase64Sources() throws {
        let plain = try parse("/insecure/w:100/plain/http%3A%2F%2Fexample.com%2Fa%3Fb%3D1@webp")
        #expect(plain.sourceURL == "http://example.com/a?b=1")
        #expect(plain.extensionFormat == .webp)
        #expect(plain.options.width == 100)
        let unencoded = try parse("/_/plain/https://example.com/x/y.jpg")
        #expect(unencoded.sourceURL == "https://example.com/x/y.jpg")
        #expect(unencoded.extensionFormat == nil)
        let base64 = try parse("/insecure/h:50/aHR0cHM6Ly9leGFtcGxlLmNvbS94LmpwZw.jpg")
        #expect(base64.sourceURL == "https://example.com/x.jpg")
        #expect(base64.extensionFormat == .jpeg)
        #expect(base64.encoding == .base64)
    }

    @Test func everyOptionAndItsShorthand() throws {
        let long = try parse("/insecure/resize:fill:10:20:1:1/dpr:2/gravity:noea:3:4/crop:50:60:so/quality:70/format:png/"
                             + "background:255:0:0/blur:1.5/sharpen:0.5/rotate:90/auto_rotate:0/strip_metadata:0/max_bytes:1000/"
                             + "cachebuster:v2/page:1/round_corner:4/border:2:00ff00/tint:0000ff80/plain/http://a.test/x")
        let short = try parse("/insecure/rs:fill:10:20:1:1/dpr:2/g:noea:3:4/c:50:60:so/q:70/f:png/bg:ff0000/bl:1.5/sh:0.5/"
                              + "rot:90/ar:0/sm:0/mb:1000/cb:v2/pg:1/round_corner:4/border:2:00ff00/tint:0000ff80/plain/http://a.test/x")
        #expect(long.options == short.options)
        let o = long.options
        #expect(o.resizingType == .fill && o.width == 10 && o.height == 20 && o.enlarge && o.extend)
        #expect(o.dpr == 2 && o.gravity == .compass(.northEast, xOffset: 3, yOffset: 4))
        #expect(o.crop == .init(width: 50, height: 60, gravity: .compass(.south, xOffset: 0, yOffset: 0)))
        #expect(o.quality == 70 && o.format == .png && o.background == RGBA(red: 255, green: 0, blue: 0))
        #expect(o.blur == 1.5 && o.sharpen == 0.5 && o.rotate == 90 && !o.autoRotate && !o.stripMetadata)
        #expect(o.maxBytes == 1000 && o.cacheBuster == "v2" && o.page == 1 && o.roundCorner == 4)
        #expect(o.border == .init(width: 2, color: RGBA(red: 0, green: 255, blue: 0)))
        #expect(o.tint == RGBA(red: 0, green: 0, blue: 255, alpha: 128))
        let sized = try parse("/insecure/s:30:40:1/rt:force/el:0/ex:1/w:31/g:fp:0.25:0.75/ext:gif/plain/http://a.test/x")
        #expect(sized.options.width == 31 && sized.options.height == 40 && !sized.options.enlarge && sized.options.extend)
        #expect(sized.options.resizingType == .force && sized.options.gravity == .focusPoint(x: 0.25, y: 0.75))
        #expect(sized.options.format == .gif)
    }

    @Test func defaultsAreImgproxys() throws {
        let o = try parse("/insecure/plain/http://a.test/x").options
        #expect(o == ProcessingOptions())
        #expect(o.resizingType == .fit && o.width == 0 && o.height == 0 && o.dpr == 1 && !o.enlarge && !o.extend)
        #expect(o.gravity == .center && o.quality == 0 && o.autoRotate && o.stripMetadata)
    }

    @Test func unknownOptionsAndBadArgumentsNameTheOption() {
        #expect(throws: ImgproxyURLError.unknownOption("zoomz")) { try parse("/insecure/zoomz:2/plain/http://a.test/x") }
        for (segment, option) in [("rs:squash:1:1", "rs"), ("w:-1", "w"), ("q:101", "q"), ("g:up", "g"), ("dpr:0", "dpr"),
                                  ("bl:x", "bl"), ("rot:45", "rot"), ("bg:12", "bg"), ("c:-1", "c"),
                                  ("h:99999999", "h"), ("g:fp:2:0", "g"), ("pg:-1", "pg")] {
            do {
                _ = try parse("/insecure/\(segment)/plain/http://a.test/x")
                Issue.record("\(segment) was accepted")
            } catch {
                guard case .invalidArgument(let name, _) = error else { Issue.record("\(segment): \(error)"); continue }
                #expect(name == option)
                #expect(error.description.contains("\"\(option)\""))
            }
        }
        #expect(throws: ImgproxyURLError.unsupportedFormat("psd")) { try parse("/insecure/plain/http://a.test/x@psd") }
        #expect(throws: ImgproxyURLError.self) { try parse("/insecure/w:10") }
        #expect(throws: ImgproxyURLError.self) { try parse("/insecure/!!!notbase64") }
        #expect(throws: ImgproxyURLError.self) { try parse("insecure/plain/http://a.test/x") }
    }

    @Test func presetsExpand() throws {
        var configuration = ImageServerConfiguration()
        try configuration.addPreset("thumb=rs:fill:64:64/q:60")
        try configuration.addPreset("sharp=sh:1")
        let o = try parse("/insecure/pr:thumb:sharp/w:32/plain/http://a.test/x", presets: configuration.presets).options
        #expect(o.resizingType == .fill && o.width == 32 && o.height == 64 && o.quality == 60 && o.sharpen == 1)
        #expect(throws: ImgproxyURLError.unknownPreset("nope")) { try parse("/insecure/preset:nope/plain/http://a.test/x") }
        #expect(throws: ServerConfigurationError.self) { try configuration.addPreset("bad=zz:1") }
        #expect(throws: ServerConfigurationError.self) { try configuration.addPreset("=w:1") }
    }

    /// Random paths made of option-like and URL-like pieces: none crashes the parser, and
    /// every one accepted comes back the same from the builder.
    @Test func randomPathsNeverCrashAndAcceptedOnesRoundTrip() throws {
        var random = SeededRandom(seed: 0xA1CE_D0)
        let names = ["rs", "resize", "s", "w", "h", "dpr", "el", "ex", "g", "c", "q", "f", "ext", "bg", "bl", "sh", "rot", "ar",
                     "sm", "mb", "cb", "pg", "round_corner", "border", "tint", "rt", "zz", "", "plain"]
        let args = ["", "0", "1", "-1", "90", "fit", "fill", "fill-down", "force", "auto", "ce", "noea", "fp", "0.5", "ff0000",
                    "00ff0080", "webp", "png", "jpg", "avif", "sm", "t", "x", "%", "99999999", "1e3", "..", "255"]
        let tails = ["plain/http://a.test/x.jpg", "plain/https%3A%2F%2Fa.test%2Fy@png", "aHR0cDovL2EudGVzdC94",
                     "aHR0cDovL2Eu/dGVzdC94.webp", "aHR0cDovL2EudGVzdC94.avif", "plain/http://a.test/x@avif", "plain/",
                     "plain/file:///etc/passwd", "%%%", "plain/http://a.test/x@"]
        var accepted = 0
        for _ in 0..<4000 {
            var path = "/" + ["insecure", "_", "sig", ""].randomElement(using: &random)!
            for _ in 0..<Int.random(in: 0...5, using: &random) {
                var segment = names.randomElement(using: &random)!
                for _ in 0..<Int.random(in: 0...5, using: &random) { segment += ":" + args.randomElement(using: &random)! }
                path += "/" + segment
            }
            if Bool.random(using: &random) { path += "/" + tails.randomElement(using: &random)! }
            if Int.random(in: 0..<10, using: &random) == 0 {
                // Raw bytes too.
                path += String(decoding: (0..<8).map { _ in UInt8.random(in: 0...255, using: &random) }, as: UTF8.self)
            }
            guard let (parsed, _) = try? ImgproxyPath.parse(path) else { continue }
            accepted += 1
            let rebuilt = ImgproxyURLBuilder().url(for: parsed)
            let (again, _) = try ImgproxyPath.parse(rebuilt)
            #expect(again.options == parsed.options, "\(path) -> \(rebuilt)")
            #expect(again.sourceURL == parsed.sourceURL, "\(path) -> \(rebuilt)")
            #expect(again.extensionFormat == parsed.extensionFormat, "\(path) -> \(rebuilt)")
            #expect(again.encoding == parsed.encoding)
        }
        #expect(accepted > 100, "enough random paths are accepted to exercise the round trip")
    }
}
