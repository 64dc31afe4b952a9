import Foundation
import Testing
@testable import Alcedo

/// The SVG fixtures of `Fixtures/svg-generated` and rsvg-convert's renders of them.
enum SVGFixtures {
    static func data(_ name: String) throws -> Data { try Fixtures.data("svg-generated/\(name)") }

    static func reference(_ name: String) throws -> AlcedoImage {
        try PNGDecoder().decode(Fixtures.data("svg-generated/\(name).ref.png"), options: DecodingOptions(colorManagement: .ignore))
    }

    static func svg(_ text: String) -> Data { Data(text.utf8) }
}

@Suite("SVG decoder")
struct SVGDecoderTests {
    @Test("renders match rsvg-convert's at the intrinsic size within 1 (shared anti-aliasing)",
          arguments: ["shapes.svg", "viewbox-only.svg", "units.svg"])
    func matchesRsvgConvert(_ name: String) throws {
        let image = try ImageCodecRegistry.shared.decode(SVGFixtures.data(name))
        let reference = try SVGFixtures.reference(name)
        #expect(image.sourceFormat == .svg)
        #expect(image.pixelSize == reference.pixelSize)
        #expect(JXLFixtures.maxVisibleDifference(image, reference) <= 1)
    }

    @Test("a target size is rendered directly, as rsvg-convert -w -h does, not rendered large and resized")
    func targetSize() throws {
        let data = try SVGFixtures.data("shapes.svg")
        let image = try SVGDecoder().decode(data, options: DecodingOptions(targetSize: PixelSize(width: 48, height: 48)))
        let reference = try SVGFixtures.reference("shapes-48x32.svg")
        #expect(image.pixelSize == PixelSize(width: 48, height: 32))
        #expect(JXLFixtures.maxVisibleDifference(image, reference) <= 1)
        // Through the manager's processor hint: the decode itself is 48x32.
        let downsampled = try DownsamplingImageProcessor(size: PixelSize(width: 48, height: 32))
            .process(SVGDecoder().decode(data, options: DecodingOptions(targetSize: PixelSize(width: 48, height: 32))))
        #expect(downsampled.pixelSize == PixelSize(width: 48, height: 32))
        // Never above the intrinsic size.
        #expect(try SVGDecoder().decode(data, options: DecodingOptions(targetSize: PixelSize(width: 960, height: 640))).pixelSize
                == PixelSize(width: 96, height: 64))
        // A drawing that declares a huge size renders at the size asked for.
        let huge = SVGFixtures.svg(#"<svg xmlns="http://www.w3.org/2000/svg" width="200000" height="100000" viewBox="0 0 2 1"><rect width="1" height="1" fill="red"/></svg>"#)
        let small = try SVGDecoder().decode(huge, options: DecodingOptions(targetSize: PixelSize(width: 100, height: 100)))
        #expect(small.pixelSize == PixelSize(width: 100, height: 50))
        #expect(small.pixel(x: 10, y: 10) == RGBA(red: 255, green: 0, blue: 0))
        #expect(small.pixel(x: 90, y: 10).alpha == 0)
    }

    @Test("sizes: viewBox when width and height are relative or missing, 300x150 when nothing is stated")
    func intrinsicSizes() throws {
        #expect(try SVGDecoder().info(for: SVGFixtures.data("viewbox-only.svg")).width == 40)
        let none = try SVGDecoder().info(for: SVGFixtures.data("no-size.svg"))
        #expect(none.width == 300 && none.height == 150 && none.hasAlpha && none.compression == "vector")
        #expect(try SVGDecoder(defaultSize: PixelSize(width: 64, height: 64)).decode(SVGFixtures.data("no-size.svg")).pixelSize
                == PixelSize(width: 64, height: 64))
        let percent = SVGFixtures.svg(#"<svg xmlns="http://www.w3.org/2000/svg" width="100%" height="100%" viewBox="0 0 30 10"/>"#)
        #expect(try SVGDecoder().info(for: percent).width == 30)
    }

    @Test("nothing outside the document is read: file: and http: references draw nothing and reach no server")
    func noExternalReferences() async throws {
        let folder = try TemporaryDirectory()
        let red = AlcedoImage(width: 8, height: 8, pixels: [UInt8](repeating: 0, count: 256).enumerated().map { $0.offset % 4 == 1 || $0.offset % 4 == 2 ? 0 : 255 })
        let pngURL = folder.url.appendingPathComponent("red.png")
        try PNGEncoder().encode(red).write(to: pngURL)
        let cssURL = folder.url.appendingPathComponent("style.css")
        try Data("rect { fill: #ff0000; }".utf8).write(to: cssURL)
        let server = try await TestHTTPServer.start()
        defer { server.stop() }
        server.route("/red.png", .ok(try PNGEncoder().encode(red), contentType: "image/png"))
        server.route("/style.css", .ok(Data("rect { fill: #ff0000; }".utf8), contentType: "text/css"))
        server.route("/font.woff", .ok(Data(), contentType: "font/woff"))
        let document = """
        <?xml version="1.0"?>
        <?xml-stylesheet type="text/css" href="\(server.url("/style.css").absoluteString)"?>
        <?xml-stylesheet type="text/css" href="\(cssURL.absoluteString)"?>
        <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="40" height="10">
          <style>@import url("\(server.url("/style.css").absoluteString)"); @font-face { font-family: x; src: url("\(server.url("/font.woff").absoluteString)"); }</style>
          <image x="0" y="0" width="10" height="10" href="\(pngURL.absoluteString)"/>
          <image x="10" y="0" width="10" height="10" xlink:href="\(server.url("/red.png").absoluteString)"/>
          <image x="20" y="0" width="10" height="10" href="red.png"/>
          <use x="30" href="\(server.url("/red.png").absoluteString)#a"/>
          <text x="30" y="9" font-family="x" font-size="1">.</text>
          <rect x="39" y="9" width="1" height="1" fill="#0000ff"/>
        </svg>
        """
        let image = try SVGDecoder().decode(SVGFixtures.svg(document))
        #expect(image.pixelSize == PixelSize(width: 40, height: 10))
        for x in [5, 15, 25, 35] { #expect(image.pixel(x: x, y: 5).alpha == 0, "x \(x)") }
        // The rect is blue: no stylesheet was applied.
        #expect(image.pixel(x: 39, y: 9) == RGBA(red: 0, green: 0, blue: 255))
        #expect(server.requestCount("/red.png") == 0)
        #expect(server.requestCount("/style.css") == 0)
        #expect(server.requestCount("/font.woff") == 0)
        // A data: URL inside the document is drawn.
        let inline = "data:image/png;base64," + (try PNGEncoder().encode(red)).base64EncodedString()
        let embedded = try SVGDecoder().decode(SVGFixtures.svg(
            #"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><image width="10" height="10" href="\#(inline)"/></svg>"#))
        #expect(embedded.pixel(x: 5, y: 5) == RGBA(red: 255, green: 0, blue: 0))
    }

    @Test("a file: external entity is not expanded")
    func externalEntity() throws {
        let folder = try TemporaryDirectory()
        let secret = folder.url.appendingPathComponent("secret.txt")
        try Data("SECRET".utf8).write(to: secret)
        let document = """
        <?xml version="1.0"?>
        <!DOCTYPE svg [ <!ENTITY x SYSTEM "\(secret.absoluteString)"> ]>
        <svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><text y="9">&x;</text></svg>
        """
        do {
            let image = try SVGDecoder().decode(SVGFixtures.svg(document))
            #expect(!image.hasAlpha || image.pixels.allSatisfy { $0 == 0 }, "the entity's text was drawn")
        } catch {
            guard case .invalidHeader(.svg, _)? = error.decodingReason else { Issue.record("\(error)"); return }
        }
    }

    @Test("hostile documents end in a typed error or a bounded render", arguments: SVGHostile.allCases)
    func hostile(_ input: SVGHostile) throws {
        // The decoder watches librsvg's CPU time while it draws: a render past the budget is
        // `.timedOut` at the budget, so "a bounded render" is one within it. (librsvg stops a
        // <use> bomb at 500,000 referenced elements: about 2 s of CPU for this one.)
        do {
            let image = try SVGDecoder().decode(input.data, options: DecodingOptions(limits: DecodingLimits(maxPixelCount: 50_000_000)))
            #expect(input.mayRender, "\(input) rendered \(image.pixelSize)")
        } catch {
            guard let reason = error.decodingReason else { Issue.record("\(error)"); return }
            switch reason {
            case .invalidHeader(.svg, _), .corrupt(.svg, _), .workingMemoryTooLarge(.svg, _, _, _), .tooManyPixels(.svg, _, _, _), .unsupportedFeature(.svg, _),
                 .timedOut(.svg, _), .tooComplex(.svg, _, _, _): break
            default: Issue.record("\(input): \(reason)")
            }
        }
    }

    @Test("a render past the CPU budget ends in .timedOut while librsvg still draws; the abandoned render holds its canvas in the budget until it finishes and is counted off")
    func abandonedRender() async throws {
        // About 2 s of CPU for librsvg (numOctaves is a loop per pixel that librsvg does not cap:
        // with 100,000 octaves at 4000x4000 it would draw for hours), against a 0.3 s budget;
        // small, so that the abandoned render ends soon and leaves its slot to the other tests.
        // The filter is named from a style sheet, which the cost estimate does not read, so the
        // render starts and only the CPU watch stops it.
        let bomb = Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="600" height="600"><style>.t { filter: url(#t) }</style><filter id="t" x="0" y="0" width="1" height="1"><feTurbulence baseFrequency="0.01" numOctaves="100"/></filter><rect class="t" width="600" height="600"/></svg>"#.utf8)
        let before = SVGRenderJob.abandonedCount
        let budget = MemoryBudget(capacity: 64 << 20)
        var options = DecodingOptions(limits: DecodingLimits(decodingTimeout: .milliseconds(300)))
        options.abandonedWorkBudget = budget
        #expect(ErrorReasons.decoding { () throws(AlcedoError) in
            _ = try SVGDecoder().decode(bomb, options: options)
        } == .timedOut(format: .svg, limit: .milliseconds(300)))
        #expect(SVGRenderJob.abandonedCount > before, "the caller did not wait for the drawing to end")
        // The canvas (600x600 RGBA) is still held, and counted in the budget as such.
        #expect(budget.snapshot.held[MemoryBudget.abandonedRendersName] == 600 * 600 * 4)
        #expect(budget.snapshot.free == 64 << 20 - 600 * 600 * 4)
        for _ in 0..<1200 where SVGRenderJob.abandonedCount > 0 { try await Task.sleep(for: .milliseconds(100)) }
        #expect(SVGRenderJob.abandonedCount == 0, "the abandoned render ended and was counted off")
        #expect(budget.snapshot.held[MemoryBudget.abandonedRendersName] == nil, "its memory was given back")
        #expect(budget.snapshot.free == 64 << 20)
    }

    @Test("broken input: empty, not XML, truncated")
    func broken() throws {
        #expect(ErrorReasons.decoding { () throws(AlcedoError) in _ = try SVGDecoder().decode(Data()) } == .emptyData)
        let data = try SVGFixtures.data("shapes.svg")
        for length in stride(from: 1, to: data.count, by: 37) {
            _ = try? SVGDecoder().decode(data.prefix(length))
        }
        do {
            _ = try SVGDecoder().decode(SVGFixtures.svg("<svg><rect></svg"))
            Issue.record("malformed XML decoded")
        } catch {
            guard case .invalidHeader(.svg, _)? = error.decodingReason else { Issue.record("\(error)"); return }
        }
    }
}

/// Hostile SVG documents.
enum SVGHostile: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case entityBomb, quadraticBlowup, useBomb, hugeDeclaredSize, deepNesting, referenceCycle, filterBomb

    var testDescription: String { rawValue }

    /// `true` when a bounded render (not an error) is an acceptable outcome.
    var mayRender: Bool { self != .entityBomb && self != .hugeDeclaredSize && self != .quadraticBlowup }

    var data: Data {
        switch self {
        case .entityBomb:
            var entities = #"<!ENTITY a0 "lollollollollollollollollollol">"#
            for level in 1...12 { entities += "<!ENTITY a\(level) \"" + String(repeating: "&a\(level - 1);", count: 10) + "\">" }
            return Data(#"<?xml version="1.0"?><!DOCTYPE svg [\#(entities)]><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><text>&a12;</text></svg>"#.utf8)
        case .quadraticBlowup:
            let big = String(repeating: "x", count: 50_000)
            let refs = String(repeating: "&b;", count: 20_000)
            return Data(#"<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY b "\#(big)">]><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><text>\#(refs)</text></svg>"#.utf8)
        case .useBomb:
            var defs = #"<rect id="l0" width="1" height="1"/>"#
            for level in 1...12 {
                defs += "<g id=\"l\(level)\">" + (0..<10).map { _ in "<use href=\"#l\(level - 1)\"/>" }.joined() + "</g>"
            }
            return Data(##"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><defs>\##(defs)</defs><use href="#l12"/></svg>"##.utf8)
        case .hugeDeclaredSize:
            return Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="1000000" height="1000000"><rect width="10" height="10"/></svg>"#.utf8)
        case .deepNesting:
            let depth = 20_000
            return Data((#"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">"# + String(repeating: "<g>", count: depth)
                + "<rect width=\"5\" height=\"5\"/>" + String(repeating: "</g>", count: depth) + "</svg>").utf8)
        case .referenceCycle:
            return Data(##"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><g id="a"><use href="#b"/></g><g id="b"><use href="#a"/></g><use href="#a"/></svg>"##.utf8)
        case .filterBomb:
            return Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="2000" height="2000"><filter id="f"><feGaussianBlur stdDeviation="500"/></filter><rect width="2000" height="2000" filter="url(#f)"/></svg>"#.utf8)
        }
    }
}

@Suite("SVG sanitizer")
struct SVGSanitizerTests {
    @Test("scripts, event attributes, javascript: values and the doctype go; the drawing stays")
    func sanitize() throws {
        let input = """
        <?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x "<script>alert(1)</script>">]>
        <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10" height="10" onload="alert(1)">
          <script>alert(2)</script><svg:script xmlns:svg="http://www.w3.org/2000/svg">alert(3)</svg:script><SCRIPT/>
          <a xlink:href=" jav&#x09;ascript:alert(4)" href="&#106;avascript:alert(5)"><rect width="5" height="5" fill="red" ONCLICK='x()'/></a>
          <!-- <script> in a comment stays a comment -->
          <a href="https://example.com/"><circle r="2"/></a>
        </svg>
        """
        let output = String(decoding: SVGSanitizer.sanitize(Data(input.utf8)), as: UTF8.self)
        for banned in ["alert(1)", "alert(2)", "alert(3)", "alert(4)", "alert(5)", "onload", "ONCLICK", "<SCRIPT", "DOCTYPE"] {
            #expect(!output.contains(banned), "\(banned) survived")
        }
        #expect(output.contains(#"<rect width="5" height="5" fill="red"/>"#) || output.contains(#"<rect width="5" height="5" fill="red" />"#))
        #expect(output.contains(#"href="https://example.com/""#))
        #expect(output.contains("<!-- <script> in a comment stays a comment -->"))
        let image = try SVGDecoder().decode(SVGSanitizer.sanitize(Data(input.utf8)))
        #expect(image.pixel(x: 2, y: 2) == RGBA(red: 255, green: 0, blue: 0))
        #expect(SVGSanitizer.sanitize(Data()) == Data())
        _ = SVGSanitizer.sanitize(Data("<svg <a href='".utf8))
    }
}

@Suite("SVG entity budget")
struct SVGEntityBudgetTests {
    /// One 50 kB entity referenced 20,000 times, each reference followed by `suffix`.
    static func blowup(suffix: String, quote: String = "\"") -> Data {
        let big = String(repeating: "x", count: 50_000)
        let refs = String(repeating: "&b;" + suffix, count: 20_000)
        return Data(("<?xml version=\"1.0\"?><!DOCTYPE svg [<!ENTITY b \(quote)\(big)\(quote)>]>"
            + "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"><text>\(refs)</text></svg>").utf8)
    }

    @Test("references stay counted when a combining mark follows them", arguments: ["", "\u{301}", "\u{20DD}", "\u{200D}"])
    func combiningMarksDoNotHideReferences(_ suffix: String) {
        #expect(throws: AlcedoError.self) { try SVGEntityBudget.check(Self.blowup(suffix: suffix)) }
    }

    @Test("a declaration whose quote carries a combining mark is still read")
    func combiningMarkAfterTheQuote() {
        let data = Self.blowup(suffix: "", quote: "'")
        var text = String(decoding: data, as: UTF8.self)
        text = text.replacingOccurrences(of: "x'>", with: "x'\u{301}>")
        #expect(throws: AlcedoError.self) { try SVGEntityBudget.check(Data(text.utf8)) }
    }

    @Test("a few small entities are within the budget")
    func smallEntitiesPass() throws {
        let data = Data(#"<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY ns "http://example.com/ns">]><svg xmlns="http://www.w3.org/2000/svg"><text>&ns;&ns;</text></svg>"#.utf8)
        try SVGEntityBudget.check(data)
    }
}
