@testable import Alcedo
@testable import AlcedoServer
import Testing

/// thumbor's filters that need more than channel arithmetic: how their arguments are read and
/// what their processors do to pixels (cases from thumbor 7.8's filters and their C code).
@Suite("thumbor filters")
struct ThumborFilterTests {
    static func plan(_ path: String, rules: ThumborRules = ThumborRules()) throws -> ProcessingOptions {
        try ThumborPlan.make(ThumborPath.parse(path), rules: rules).options
    }

    /// The error planning `path` throws, `nil` when it plans.
    static func planError(_ path: String) -> ThumborURLError? {
        do {
            _ = try ThumborPlan.make(ThumborPath.parse(path), rules: ThumborRules())
            return nil
        } catch {
            return error
        }
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
        #expect(options.steps == [
            .urlWatermark(ProcessingOptions.URLWatermark(sourceURL: "http://b.com/w.png", x: .pixels(10, fromEnd: true),
                                                         y: .percent(20, fromEnd: false), alpha: 50, widthRatio: 30, heightRatio: nil)),
            .urlWatermark(ProcessingOptions.URLWatermark(sourceURL: "http://c.com/x.png", x: .center, y: .repeat, alpha: 0)),
        ])
        #expect(options.overlayURLs == ["http://b.com/w.png", "http://c.com/x.png"])
        #expect(options.pixelIdentifier.contains("url_watermark:-10:20p:50:30:none:"))
        // Arguments that do not match thumbor's patterns: the filter is ignored.
        for bad in ["watermark(b.com/w.png,left,0,50)", "watermark(b.com/w.png,0,0,-5)", "watermark(b.com/w.png,0,0)",
                    "watermark(b.com/w.png,0,0,10,-3,none)"] {
            #expect(try Self.plan("/unsafe/filters:\(bad)/a.com/i.jpg").steps.isEmpty, "\(bad)")
        }
    }

    @Test("without EXIF rotation, a fit-in lets the decoder scale to a fit in the larger side's square, anything else to a fill")
    func decodingTargetWithoutAutoRotation() throws {
        var rules = ThumborRules()
        rules.defaults.autoRotate = false
        let fit = try ThumborPlan.make(ThumborPath.parse("/unsafe/fit-in/300x200/a.com/i.jpg"), rules: rules).options
        let fitTarget = ImgproxyProcessor(options: fit).decodingTarget
        #expect(fitTarget?.size == PixelSize(width: 300, height: 300) && fitTarget?.mode == .aspectFit)
        let crop = try ThumborPlan.make(ThumborPath.parse("/unsafe/300x200/a.com/i.jpg"), rules: rules).options
        #expect(ImgproxyProcessor(options: crop).decodingTarget?.mode == .aspectFill)
        let oneSide = try ThumborPlan.make(ThumborPath.parse("/unsafe/fit-in/300x0/a.com/i.jpg"), rules: rules).options
        #expect(ImgproxyProcessor(options: oneSide).decodingTarget?.mode == .aspectFill)
        // Either orientation of a 2000x1500 source fits in 300x200 at a scale no larger than the square's.
        let square = min(300.0 / 2000, 300.0 / 1500)
        #expect(square >= min(300.0 / 2000, 200.0 / 1500) && square >= min(300.0 / 1500, 200.0 / 2000))
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
        #expect(auto.steps == [.fill(.average, color: nil, extend: true, merge: false)] && auto.background == nil)
        #expect(try Self.plan("/unsafe/fit-in/300x300/filters:fill(blur)/a.com/i.jpg").steps == [.fill(.blur, color: nil, extend: true)])
        #expect(try Self.plan("/unsafe/fit-in/300x300/filters:fill(red)/a.com/i.jpg").steps
            == [.fill(.background, color: RGBA(red: 255, green: 0, blue: 0), extend: true, merge: false)])
        #expect(try Self.plan("/unsafe/300x300/filters:fill(red)/a.com/i.jpg").steps
            == [.fill(.background, color: RGBA(red: 255, green: 0, blue: 0), extend: false, merge: false)])
        #expect(try Self.plan("/unsafe/fit-in/300x300/filters:fill(red,1)/a.com/i.jpg").steps
            == [.fill(.background, color: RGBA(red: 255, green: 0, blue: 0), extend: true, merge: true)])
        let halves = Self.image(4, 2) { x, _ in x < 2 ? [200, 0, 10, 255] : [0, 100, 21, 255] }
        #expect(halves.meanColor == RGBA(red: 100, green: 50, blue: 15))
        var options = auto
        options.width = 8
        options.height = 4
        let extended = try ImgproxyProcessor(options: options).process(halves)
        #expect(extended.pixelSize == PixelSize(width: 8, height: 4))
        #expect(Array(extended.frames[0].pixels[0..<4]) == [100, 50, 15, 255])
        options.steps = [.fill(.blur, color: nil, extend: true)]
        let blurred = try ImgproxyProcessor(options: options).process(halves)
        let corner = Array(blurred.frames[0].pixels[0..<4])
        // The blurred, stretched image: between the two halves' colours, opaque.
        #expect(corner[3] == 255 && corner[0] > 0 && corner[0] < 200 && corner[1] > 0 && corner[1] < 100)
    }

    @Test("colours as Pillow reads them: CSS names in any case, hex of 3, 4, 6 or 8 digits, transparent")
    func colors() throws {
        #expect(ThumborFilter.color("CornflowerBlue") == RGBA(red: 100, green: 149, blue: 237))
        #expect(ThumborFilter.color("darkslategray") == RGBA(red: 47, green: 79, blue: 79))
        #expect(ThumborFilter.color("f80") == RGBA(red: 255, green: 136, blue: 0))
        #expect(ThumborFilter.color("0f08") == RGBA(red: 0, green: 255, blue: 0, alpha: 136))
        #expect(ThumborFilter.color("00FF00") == RGBA(red: 0, green: 255, blue: 0))
        #expect(ThumborFilter.color("00ff0080") == RGBA(red: 0, green: 255, blue: 0, alpha: 128))
        #expect(ThumborFilter.color("transparent") == .clear)
        #expect(ThumborFilter.color("bogus") == nil)
        #expect(ThumborFilter.color("12345") == nil)
        #expect(ThumborFilter.pillowColorNames.count == 148)
        // A name of six letters is no hex for colorize, whose colour is bytes.fromhex's.
        #expect(try Self.plan("/unsafe/filters:colorize(10,10,10,orange)/a.com/i.jpg").steps.isEmpty)
        #expect(try Self.plan("/unsafe/filters:background_color(auto)/a.com/i.png").steps
            == [.fill(.average, color: nil, extend: false, merge: true)])
        #expect(try Self.plan("/unsafe/filters:background_color(0000ff80)/a.com/i.png").steps
            == [.background(RGBA(red: 0, green: 0, blue: 255, alpha: 128))])
    }

    @Test("compositing over a colour with alpha, and alpha dropped as Pillow drops it")
    func compositingAndDroppedAlpha() throws {
        // A transparent pixel, a half-transparent red one and an opaque green one.
        let image = AlcedoImage(width: 3, height: 1, pixels: [9, 9, 9, 0, 255, 0, 0, 128, 0, 255, 0, 255])
        let over = image.composited(over: RGBA(red: 0, green: 0, blue: 255, alpha: 128))
        #expect(Array(over.frames[0].pixels[0..<4]) == [0, 0, 255, 128])
        // alpha 0.502 + 0.502 * 0.498 = 0.752; red 255 * 0.502 / 0.752, blue 255 * 0.25 / 0.752.
        #expect(Array(over.frames[0].pixels[4..<8]) == [170, 0, 85, 192])
        #expect(Array(over.frames[0].pixels[8..<12]) == [0, 255, 0, 255])
        #expect(image.composited(over: .clear).frames[0].pixels == image.frames[0].pixels)
        #expect(image.opaque(fromAlpha: 0).frames[0].pixels == [9, 9, 9, 255, 255, 0, 0, 255, 0, 255, 0, 255])
        #expect(image.opaque(fromAlpha: 1).frames[0].pixels == [9, 9, 9, 0, 255, 0, 0, 255, 0, 255, 0, 255])
    }

    @Test("sharpen(amount,radius,luminance_only) is the wavelet sharpen, arguments honoured")
    func sharpen() throws {
        #expect(try Self.plan("/unsafe/filters:sharpen(2,1.0,true)/a.com/i.jpg").steps
            == [.waveletSharpen(ProcessingOptions.WaveletSharpen(amount: 2, radius: 1, luminanceOnly: true))])
        #expect(try Self.plan("/unsafe/filters:sharpen(2,1.0)/a.com/i.jpg").steps.isEmpty)
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

    @Test("curve: thumbor's natural cubic spline through the points, the ends held flat")
    func curve() throws {
        let ramp = AlcedoImage(width: 256, height: 1, pixels: (0..<256).flatMap { [UInt8($0), UInt8($0), UInt8($0), 255] })
        let identity: [LevelsImageProcessor.Point] = [.init(0, 0), .init(255, 255)]
        let points: [LevelsImageProcessor.Point] = [.init(0, 50), .init(16, 51), .init(32, 69), .init(255, 255)]
        let curved = try LevelsImageProcessor(.curves(all: identity, red: points, green: identity, blue: identity)).process(ramp)
        let red = (0..<256).map { Int(curved.frames[0].pixels[$0 * 4]) }
        // Through the points, and a spline (not straight lines) between them: the straight line
        // from (32,69) to (255,255) gives 148 at x = 128; the spline bends above it.
        #expect(red[0] == 50 && red[16] == 51 && red[32] == 69 && red[255] == 255)
        #expect(red[128] > 150, "\(red[128])")
        #expect((0..<256).map { Int(curved.frames[0].pixels[$0 * 4 + 1]) } == Array(0..<256))
        // Values computed by thumbor 7.8's _curve for these points (natural spline, rounded half away from zero).
        #expect(Array(red[0...11]) == [50, 50, 50, 49, 49, 49, 49, 49, 49, 49, 49, 49], "\(Array(red[0...11]))")
        #expect(red[128] == 172)
        // Before the first input the first output, from the last input on the last output.
        let inner = try LevelsImageProcessor(.curves(all: [.init(40, 10), .init(200, 220)], red: [], green: [], blue: [])).process(ramp)
        #expect(inner.frames[0].pixels[0] == 10 && inner.frames[0].pixels[39 * 4] == 10 && inner.frames[0].pixels[250 * 4] == 220)
        #expect(inner.frames[0].pixels[120 * 4] == 115)
    }

    @Test("noise: glibc's random() sequence for the seed, one value per pixel on R, G and B alike")
    func noise() throws {
        // srandom(7), srandom(1): the C library's first outputs.
        var seven = NoiseImageProcessor.CRandom(seed: 7)
        #expect([seven.next(), seven.next(), seven.next()] == [1_045_618_677, 1_863_967_299, 1_272_579_899])
        var one = NoiseImageProcessor.CRandom(seed: 0)
        #expect(one.next() == 1_804_289_383)
        #expect(try Self.plan("/unsafe/filters:noise(40,7)/a.com/i.jpg").steps == [.effect(.noise(amount: 40, seed: 7))])
        #expect(try Self.plan("/unsafe/filters:noise(-4)/a.com/i.jpg").steps.isEmpty)
        let grey = Self.image(64, 64) { _, _ in [128, 100, 90, 255] }
        let noisy = try NoiseImageProcessor(amount: 40, seed: 7).process(grey)
        let p = noisy.frames[0].pixels
        // 1045618677 % 40 - 20 = 17 on the first pixel.
        #expect(Array(p[0..<4]) == [145, 117, 107, 255])
        var sum = 0, low = 255, high = 0
        for index in stride(from: 0, to: p.count, by: 4) {
            let shift = Int(p[index]) - 128
            #expect(Int(p[index + 1]) - 100 == shift && Int(p[index + 2]) - 90 == shift)
            sum += shift; low = min(low, shift); high = max(high, shift)
        }
        #expect(low == -20 && high == 19)
        #expect(abs(Double(sum) / 4096 - -0.5) < 0.6)
        #expect(try NoiseImageProcessor(amount: 40, seed: 7).process(grey).frames[0].pixels == p)
    }

    @Test("convolution: thumbor's kernel arithmetic, odd sides only")
    func convolution() throws {
        #expect(try Self.plan("/unsafe/filters:convolution(1;2;1;2;4;2;1;2;1,3,true)/a.com/i.jpg").steps
            == [.effect(.convolution(kernel: [1, 2, 1, 2, 4, 2, 1, 2, 1], columns: 3, normalize: true))])
        #expect(try Self.plan("/unsafe/filters:convolution(-1;0;1,3)/a.com/i.jpg").steps
            == [.effect(.convolution(kernel: [-1, 0, 1], columns: 3, normalize: true))])
        // A kernel without a centre: 400 (thumbor 7.8 fails with a 500).
        #expect(Self.planError("/unsafe/filters:convolution(1;2;1;2,2,true)/a.com/i.jpg") == .invalidConvolutionKernel("1;2;1;2,2"))
        #expect(Self.planError("/unsafe/filters:convolution(1;2;1;2;4;2;1;2;1,2)/a.com/i.jpg")?.status == 400)
        #expect(Self.planError("/unsafe/filters:convolution(1;2;1;2;4;2,3)/a.com/i.jpg") == .invalidConvolutionKernel("1;2;1;2;4;2,3"))
        for bad in ["convolution(1;2;a,3,true)", "convolution(1;2;1,0,true)"] {
            #expect(try Self.plan("/unsafe/filters:\(bad)/a.com/i.jpg").steps.isEmpty, "\(bad)")
        }
        let edge = Self.image(4, 1) { x, _ in x < 2 ? [0, 0, 0, 255] : [200, 100, 50, 255] }
        let blurred = try ConvolutionImageProcessor(kernel: [1, 2, 1], columns: 3).process(edge)
        // (0 + 0 + 200) / 4 = 50 at x = 1, (0 + 400 + 200) / 4 = 150 at x = 2; alpha kept.
        #expect(Array(blurred.frames[0].pixels[4..<12]) == [50, 25, 12, 255, 150, 75, 37, 255])
        let raw = try ConvolutionImageProcessor(kernel: [-1, 0, 1], columns: 3, normalize: false).process(edge)
        #expect(Array(raw.frames[0].pixels[4..<8]) == [200, 100, 50, 255])
        #expect(Array(raw.frames[0].pixels[8..<12]) == [200, 100, 50, 255] && raw.frames[0].pixels[12] == 0)
    }

    /// A nine patch of `size` (markers included): stretchable columns and rows `stretch`, content
    /// area `content` (both along each axis), the inside filled by `color(x, y)`.
    static func ninePatch(_ size: Int, stretch: ClosedRange<Int>, content: ClosedRange<Int>, _ color: (Int, Int) -> [UInt8]) -> AlcedoImage {
        image(size, size) { x, y in
            let last = size - 1
            if y == 0 || x == 0 { return (x == 0 && y == 0) || !stretch.contains(y == 0 ? x : y) ? [0, 0, 0, 0] : [0, 0, 0, 255] }
            if y == last || x == last {
                return x == last && y == last || !content.contains(y == last ? x : y) ? [0, 0, 0, 0] : [0, 0, 0, 255]
            }
            return color(x, y)
        }
    }

    @Test("frame(url): thumbor's nine patch, the padding from its content area, the cells stretched over the result")
    func frame() throws {
        #expect(try Self.plan("/unsafe/filters:frame(b.com/f.png)/a.com/i.jpg").steps == [.frame(url: "http://b.com/f.png")])
        // 5x5: the middle column and row stretch; the content area is the middle, one pixel in on each side.
        let patch = Self.ninePatch(5, stretch: 2...2, content: 2...2) { x, y in
            (x == 1 || x == 3) && (y == 1 || y == 3) ? [255, 0, 0, 255] : [0, 0, 0, 0]
        }
        #expect(NinePatchFrame.padding(NinePatchFrame.Bitmap(width: 5, height: 5, pixels: patch.frames[0].pixels)) == (1, 1, 1, 1))
        let blue = Self.image(2, 2) { _, _ in [0, 0, 255, 255] }
        let framed = NinePatchFrame.apply(patch, to: blue)
        #expect(framed.pixelSize == PixelSize(width: 4, height: 4))
        let p = framed.frames[0].pixels
        func pixel(_ x: Int, _ y: Int) -> [UInt8] { Array(p[((y * 4 + x) * 4)..<((y * 4 + x) * 4 + 4)]) }
        #expect(pixel(0, 0) == [255, 0, 0, 255] && pixel(3, 3) == [255, 0, 0, 255] && pixel(3, 0) == [255, 0, 0, 255])
        #expect(pixel(1, 1) == [0, 0, 255, 255] && pixel(2, 2) == [0, 0, 255, 255])
        #expect(pixel(1, 0) == [255, 255, 255, 255] && pixel(0, 2) == [255, 255, 255, 255])
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
