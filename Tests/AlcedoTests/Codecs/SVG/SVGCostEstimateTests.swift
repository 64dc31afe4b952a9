import Foundation
import Testing
@testable import Alcedo

/// The cost estimate made before librsvg draws: documents that cannot fit the CPU budget or
/// the working memory are refused at once; ordinary ones are estimated well under it.
@Suite("SVG cost estimate")
struct SVGCostEstimateTests {
    private static func svg(width: Int, height: Int, _ body: String) -> Data {
        Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="\#(width)" height="\#(height)">\#(body)</svg>"#.utf8)
    }

    @Test("feTurbulence with a huge numOctaves is refused before drawing, with no render started")
    func turbulenceRefusedUpFront() throws {
        let data = Self.svg(width: 2000, height: 2000, #"<filter id="t" x="0" y="0" width="1" height="1"><feTurbulence baseFrequency="0.01" numOctaves="100000"/></filter><rect width="2000" height="2000" filter="url(#t)"/>"#)
        let before = SVGRenderJob.abandonedCount
        let reason = ErrorReasons.decoding { () throws(AlcedoError) in _ = try SVGDecoder().decode(data) }
        guard case .tooComplex(.svg, let estimate, let limit, let what) = reason else { Issue.record("\(String(describing: reason))"); return }
        #expect(estimate > limit && limit == DecodingLimits.default.decodingTimeout)
        #expect(what.contains("1 filter use") && what.contains("2000x2000"))
        #expect(SVGRenderJob.abandonedCount == before)
        #expect(AlcedoError.decodingError(reason: reason!).description.contains("of CPU time, over the limit of"))
    }

    @Test("hundreds of full-canvas blurs: refused for their CPU; at 4000x4000 already for their surfaces")
    func stackedBlurs() throws {
        let uses = String(repeating: #"<rect width="1000" height="1000" fill="red" filter="url(#b)"/>"#, count: 200)
        let filter = #"<filter id="b" x="0" y="0" width="1" height="1"><feGaussianBlur stdDeviation="50"/><feGaussianBlur stdDeviation="50"/></filter>"#
        let cpu = ErrorReasons.decoding { () throws(AlcedoError) in _ = try SVGDecoder().decode(Self.svg(width: 1000, height: 1000, filter + uses)) }
        guard case .tooComplex(.svg, _, _, _) = cpu else { Issue.record("\(String(describing: cpu))"); return }
        // Two primitives at 4000x4000: (2 + 3) canvases of 64 MB, over the 256 MiB default.
        let big = Self.svg(width: 4000, height: 4000, filter + #"<rect width="4000" height="4000" filter="url(#b)"/>"#)
        let memory = ErrorReasons.decoding { () throws(AlcedoError) in _ = try SVGDecoder().decode(big) }
        guard case .workingMemoryTooLarge(.svg, _, 320_000_000, _) = memory else { Issue.record("\(String(describing: memory))"); return }
    }

    @Test("the filter region follows the filtered element's box, the filter's region attributes and the root's scale")
    func regions() {
        let blur = #"<filter id="s"><feGaussianBlur stdDeviation="3"/></filter>"#
        // 100 shadows on 20x20 circles: a region of 24x24 each, not the canvas.
        let small = SVGCostEstimate(Self.svg(width: 1000, height: 1000, blur + String(repeating: #"<circle r="10" filter="url(#s)"/>"#, count: 100)),
                                    canvas: PixelSize(width: 1000, height: 1000))
        #expect(small.filterUses == 100)
        // The same on paths, whose box the text does not give: the whole canvas each.
        let paths = SVGCostEstimate(Self.svg(width: 1000, height: 1000, blur + String(repeating: #"<path d="M0 0h20v20z" filter="url(#s)"/>"#, count: 100)),
                                    canvas: PixelSize(width: 1000, height: 1000))
        #expect(paths.cpu > small.cpu * 20)
        // A viewBox scales user units: the same drawing rendered 4x larger costs about 16x.
        let scaled = SVGCostEstimate(Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="4000" height="4000" viewBox="0 0 1000 1000">\#(blur)<rect width="1000" height="1000" filter="url(#s)"/></svg>"#.utf8),
                                     canvas: PixelSize(width: 4000, height: 4000))
        let unscaled = SVGCostEstimate(Self.svg(width: 1000, height: 1000, blur + #"<rect width="1000" height="1000" filter="url(#s)"/>"#),
                                       canvas: PixelSize(width: 1000, height: 1000))
        #expect(scaled.cpu > unscaled.cpu * 12 && scaled.cpu < unscaled.cpu * 20)
    }

    @Test("references: in a style attribute, before the filter's definition, namespaced; comments, CDATA and the doctype are skipped")
    func scanning() {
        let body = #"""
        <!-- <rect filter="url(#f)"/> in a comment --><![CDATA[ <rect filter="url(#f)"/> ]]>
        <rect width="10" height="10" style="fill: red; filter: url(#f)"/>
        <svg:rect xmlns:svg="http://www.w3.org/2000/svg" width="10" height="10" filter="url('#f')"/>
        <rect width="10" height="10" filter="url(#missing)"/>
        <filter id="f"><feMerge><feMergeNode/><feMergeNode/></feMerge><feOffset dx="1"/></filter>
        """#
        let data = Data((#"<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x "<rect filter='url(#f)'/>">]>"# + String(decoding: Self.svg(width: 10, height: 10, body), as: UTF8.self)).utf8)
        let estimate = SVGCostEstimate(data, canvas: PixelSize(width: 10, height: 10))
        #expect(estimate.filterUses == 2)
        // svg, 3 rects, filter, feMerge, 2 feMergeNode, feOffset.
        #expect(estimate.elements == 9)
        // feMerge and feOffset: two primitives, five canvases.
        #expect(estimate.filterMemory == 10 * 10 * 4 * 5)
    }

    @Test("ordinary documents are estimated far under the budget and render", arguments: ["shapes.svg", "units.svg", "viewbox-only.svg"])
    func ordinary(_ name: String) throws {
        let data = try SVGFixtures.data(name)
        let image = try SVGDecoder().decode(data, options: DecodingOptions(targetSize: PixelSize(width: 1024, height: 1024)))
        let estimate = SVGCostEstimate(data, canvas: image.pixelSize)
        #expect(estimate.cpu < .milliseconds(100), "\(estimate)")
    }

    @Test("an icon sheet of 200 small drop shadows is within the budget and renders")
    func iconSheet() throws {
        var body = #"<filter id="d"><feDropShadow dx="2" dy="2" stdDeviation="2"/></filter>"#
        for i in 0..<200 { body += #"<circle cx="\#(20 + i % 25 * 40)" cy="\#(20 + i / 25 * 40)" r="15" fill="teal" filter="url(#d)"/>"# }
        let data = Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="1024" height="340" viewBox="0 0 1024 340">\#(body)</svg>"#.utf8)
        let estimate = SVGCostEstimate(data, canvas: PixelSize(width: 1024, height: 340))
        #expect(estimate.filterUses == 200 && estimate.cpu < .seconds(1), "\(estimate)")
        var options = DecodingOptions()
        options.limits.decodingTimeout = .seconds(120)
        let image = try SVGDecoder().decode(data, options: options)
        #expect(image.width == 1024 && image.height == 340)
    }
}
