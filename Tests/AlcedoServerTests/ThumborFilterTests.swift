import Alcedo
@testable import AlcedoServer
import Testing

/// thumbor's filters that need more than channel arithmetic: how their arguments are read and
/// what their processors do to pixels (cases from thumbor 7.8's filters and their C code).
@Suite("thumbor filters")
struct ThumborFilterTests {
    static func plan(_ path: String, rules: ThumborRules = ThumborRules()) throws -> ProcessingOptions {
        try ThumborPlan.make(ThumborPath.parse(path), rules: rules).options
    }

    /// An opaque image of `width` x `height` filled by `color(x, y)`.
    static func image(_ width: Int, _ height: Int, _ color: (Int, Int) -> [UInt8]) -> AlcedoImage {
        var pixels: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width { pixels += color(x, y) }
        }
        return AlcedoImage(width: width, height: height, pixels: pixels)
    }

    @Test("watermark arguments: coordinates, alpha, ratios, the URL as the loader fetches it")
    func watermarkArguments() throws {
        let options = try Self.plan("/unsafe/filters:watermark(b.com/w.png,-10,20p,50,30,none):watermark(http://c.com/x.png,center,repeat,0)/a.com/i.jpg")
        #expect(options.urlWatermarks == [
            ProcessingOptions.URLWatermark(sourceURL: "http://b.com/w.png", x: .pixels(10, fromEnd: true), y: .percent(20, fromEnd: false),
                                           alpha: 50, widthRatio: 30, heightRatio: nil),
            ProcessingOptions.URLWatermark(sourceURL: "http://c.com/x.png", x: .center, y: .repeat, alpha: 0),
        ])
        #expect(options.pixelIdentifier.contains("url_watermark:-10:20p:50:30:none:"))
        // Arguments that do not match thumbor's patterns: the filter is ignored.
        for bad in ["watermark(b.com/w.png,left,0,50)", "watermark(b.com/w.png,0,0,-5)", "watermark(b.com/w.png,0,0)",
                    "watermark(b.com/w.png,0,0,10,-3,none)"] {
            #expect(try Self.plan("/unsafe/filters:\(bad)/a.com/i.jpg").urlWatermarks.isEmpty, "\(bad)")
        }
    }

    @Test("watermark placement follows thumbor's arithmetic")
    func watermarkPlacement() {
        typealias P = URLWatermarkPlacement
        let image = PixelSize(width: 300, height: 200), mark = PixelSize(width: 40, height: 20)
        func origins(_ x: ProcessingOptions.WatermarkCoordinate, _ y: ProcessingOptions.WatermarkCoordinate) -> ([Int], [Int]) {
            let o = P.origins(ProcessingOptions.URLWatermark(sourceURL: "", x: x, y: y, alpha: 0), image: image, watermark: mark)
            return (o.x, o.y)
        }
        #expect(origins(.pixels(10, fromEnd: false), .pixels(10, fromEnd: true)) == ([10], [170]))
        #expect(origins(.pixels(0, fromEnd: true), .center) == ([260], [90]))
        #expect(origins(.percent(10, fromEnd: false), .percent(50, fromEnd: true)) == ([30], [80]))
        // 300 / 40 = 7 copies, 20 spare pixels spread over 6 gaps (3 each).
        #expect(origins(.repeat, .pixels(0, fromEnd: false)).0 == [0, 43, 86, 129, 172, 215, 258])
        // Fewer than two fit: ceil(side / mark) copies, 10 pixels apart.
        let wide = P.origins(ProcessingOptions.URLWatermark(sourceURL: "", x: .repeat, y: .pixels(0, fromEnd: false), alpha: 0),
                             image: image, watermark: PixelSize(width: 200, height: 20))
        #expect(wide.x == [0, 210])
        // calc_watermark_size: 30% of the width, the height following the aspect ratio.
        #expect(P.watermarkSize(image: image, watermark: mark, widthRatio: 30, heightRatio: nil) == PixelSize(width: 90, height: 45))
        #expect(P.watermarkSize(image: image, watermark: mark, widthRatio: 50, heightRatio: 10) == PixelSize(width: 40, height: 20))
    }

    @Test("watermark alpha lowers each alpha value by 255 * alpha / 100, then merges")
    func watermarkAlpha() {
        let base = Self.image(4, 4) { _, _ in [0, 0, 0, 255] }
        let white = Self.image(2, 2) { _, _ in [255, 255, 255, 255] }
        let mark = ProcessingOptions.URLWatermark(sourceURL: "", x: .pixels(1, fromEnd: false), y: .pixels(1, fromEnd: false), alpha: 40)
        let result = URLWatermarkPlacement.apply(mark, image: white, over: base)
        let pixels = result.frames[0].pixels
        // 255 - 102 = 153: white at 60% over black.
        #expect(pixels[(1 * 4 + 1) * 4] == 153)
        #expect(pixels[0] == 0 && pixels[(3 * 4 + 3) * 4] == 0)
    }

    @Test("fill(auto) and fill(blur) extend fit-in results; fill(auto) is the mean colour")
    func fill() throws {
        let auto = try Self.plan("/unsafe/fit-in/300x300/filters:fill(auto)/a.com/i.jpg")
        #expect(auto.extend && auto.extendFill == .average && auto.background == nil)
        #expect(try Self.plan("/unsafe/fit-in/300x300/filters:fill(blur)/a.com/i.jpg").extendFill == .blur)
        #expect(try Self.plan("/unsafe/fit-in/300x300/filters:fill(red)/a.com/i.jpg").extendFill == .background)
        let halves = Self.image(4, 2) { x, _ in x < 2 ? [200, 0, 10, 255] : [0, 100, 21, 255] }
        #expect(halves.meanColor == RGBA(red: 100, green: 50, blue: 15))
        var options = auto
        options.width = 8
        options.height = 4
        let extended = try ImgproxyProcessor(options: options).process(halves)
        #expect(extended.pixelSize == PixelSize(width: 8, height: 4))
        #expect(Array(extended.frames[0].pixels[0..<4]) == [100, 50, 15, 255])
        options.extendFill = .blur
        let blurred = try ImgproxyProcessor(options: options).process(halves)
        let corner = Array(blurred.frames[0].pixels[0..<4])
        // The blurred, stretched image: between the two halves' colours, opaque.
        #expect(corner[3] == 255 && corner[0] > 0 && corner[0] < 200 && corner[1] > 0 && corner[1] < 100)
    }

    @Test("sharpen(amount,radius,luminance_only) is the wavelet sharpen, arguments honoured")
    func sharpen() throws {
        #expect(try Self.plan("/unsafe/filters:sharpen(2,1.0,true)/a.com/i.jpg").waveletSharpen
            == ProcessingOptions.WaveletSharpen(amount: 2, radius: 1, luminanceOnly: true))
        #expect(try Self.plan("/unsafe/filters:sharpen(2,1.0)/a.com/i.jpg").waveletSharpen == nil)
        let edge = Self.image(16, 4) { x, _ in x < 8 ? [60, 60, 60, 255] : [180, 180, 180, 255] }
        let unchanged = try WaveletSharpenImageProcessor(amount: 0, radius: 1).process(edge)
        #expect(unchanged.frames[0].pixels == edge.frames[0].pixels)
        let sharp = try WaveletSharpenImageProcessor(amount: 2, radius: 0.5).process(edge)
        let row = (0..<16).map { Int(sharp.frames[0].pixels[$0 * 4]) }
        // Overshoot on both sides of the edge, flat parts far from it kept.
        #expect(row[7] < 60 && row[8] > 180, "\(row)")
        #expect(abs(row[0] - 60) <= 2 && abs(row[15] - 180) <= 2, "\(row)")
        // Luminance only: a grey edge stays grey (Cb and Cr untouched).
        let luma = try WaveletSharpenImageProcessor(amount: 2, radius: 0.5, luminanceOnly: true).process(edge)
        let p = luma.frames[0].pixels
        #expect((0..<16).allSatisfy { abs(Int(p[$0 * 4]) - Int(p[$0 * 4 + 2])) <= 1 })
        #expect(Int(p[7 * 4]) < 60)
    }

    @Test("autojpg and AUTO_PNG_TO_JPG: thumbor 7.8's rule, a filter on a server that converts turns it off")
    func autojpg() throws {
        // Not in thumbor's BUILTIN_FILTERS: only when FILTERS names it.
        #expect(try Self.plan("/unsafe/filters:autojpg()/a.com/i.png").pngToJPEG == nil)
        var rules = ThumborRules()
        rules.filters = ["autojpg", "quality"]
        #expect(try Self.plan("/unsafe/filters:autojpg()/a.com/i.png", rules: rules).pngToJPEG == true)
        #expect(try Self.plan("/unsafe/filters:autojpg(false)/a.com/i.png", rules: rules).pngToJPEG == false)
        #expect(try Self.plan("/unsafe/a.com/i.png", rules: rules).pngToJPEG == nil)
        rules.autoPNGToJPG = true
        #expect(try Self.plan("/unsafe/filters:autojpg()/a.com/i.png", rules: rules).pngToJPEG == false)
        var encoding = ResponseEncoding(requested: nil, accepted: AcceptedImageFormats(), quality: 0,
                                        defaultQualities: FormatQualities(fallback: 80, perFormat: [:]), avifSpeed: 8,
                                        background: nil, maxBytes: 0, preferredFormats: [.jpeg, .png, .gif, .webp, .avif])
        #expect(encoding.format(source: .png, animated: false, alpha: { false }) == .png)
        encoding.pngToJPEG = true
        #expect(encoding.format(source: .png, animated: false, alpha: { false }) == .jpeg)
        #expect(encoding.format(source: .png, animated: false, alpha: { true }) == .png)
        #expect(encoding.format(source: .gif, animated: false, alpha: { false }) == .gif)
        encoding.requested = .png
        #expect(encoding.format(source: .png, animated: false, alpha: { false }) == .png)
    }

    @Test("trim: the corner's colour within thumbor's Euclidean distance; the manual crop stays in source pixels")
    func trim() throws {
        #expect(try Self.plan("/unsafe/trim:bottom-right:30/a.com/i.png").cornerTrim
            == ProcessingOptions.CornerTrim(corner: .bottomRight, tolerance: 30))
        // A white (250) border, one blue pixel in the top-left corner, red content at (3...5, 2...4).
        let image = Self.image(10, 8) { x, y in
            if (3...5).contains(x), (2...4).contains(y) { return [255, 0, 0, 255] }
            return x == 0 && y == 0 ? [0, 0, 255, 255] : [250, 250, 250, 255]
        }
        // From the bottom-right: the white border goes, the blue pixel stays (thumbor's box).
        let fromBottomRight = try #require(CornerTrimImageProcessor(corner: .bottomRight, tolerance: 10).contentRect(of: image))
        #expect(fromBottomRight.x == 0 && fromBottomRight.y == 0 && fromBottomRight.size == PixelSize(width: 6, height: 5))
        // From the top-left (blue): every other pixel differs, nothing is cut.
        #expect(CornerTrimImageProcessor(corner: .topLeft, tolerance: 10).contentRect(of: image) == nil)
        // The distance is Euclidean: (250,250,250) is √75 ≈ 8.7 from white.
        let whiteBorder = Self.image(6, 6) { x, y in (2...3).contains(x) && (2...3).contains(y) ? [0, 0, 0, 255] : [255, 255, 255, 255] }
        let almost = Self.image(6, 6) { x, y in
            if (2...3).contains(x) && (2...3).contains(y) { return [0, 0, 0, 255] }
            return x == 0 && y == 0 ? [255, 255, 255, 255] : [250, 250, 250, 255]
        }
        #expect(CornerTrimImageProcessor(tolerance: 8).contentRect(of: almost) == nil)
        #expect(CornerTrimImageProcessor(tolerance: 9).contentRect(of: almost)?.size == PixelSize(width: 2, height: 2))
        #expect(CornerTrimImageProcessor(tolerance: 0).contentRect(of: whiteBorder)?.size == PixelSize(width: 2, height: 2))
        // A crop after a trim is in the untrimmed image's pixels, as thumbor shifts it.
        let options = try Self.plan("/unsafe/trim/3x3:4x4/a.com/i.png")
        let cut = try ImgproxyProcessor(options: options).process(whiteBorder)
        #expect(cut.pixelSize == PixelSize(width: 1, height: 1) && cut.frames[0].pixels == [0, 0, 0, 255])
    }
}
