import Alcedo
@testable import AlcedoServer
import Testing

/// imgproxy's documented resizing results, for a landscape (400x300) and a portrait (300x400) source.
@Suite("imgproxy processing")
struct ProcessorTests {
    static let landscape = TestImages.halves(width: 400, height: 300)
    static let portrait = TestImages.halves(width: 300, height: 400)

    private func options(_ path: String) throws -> ProcessingOptions {
        try ImgproxyPath.parse("/insecure/\(path)/plain/http://a.test/x").path.options
    }

    /// The result's size, after checking that ``ImgproxyProcessor/outputSize(for:)`` (what the
    /// memory budget reserves for, before decoding) gave the same.
    private func size(_ image: AlcedoImage, _ path: String) throws -> PixelSize {
        let processor = ImgproxyProcessor(options: try options(path))
        let result = try processor.process(image).pixelSize
        #expect(processor.outputSize(for: image.pixelSize) == result, "\(image.pixelSize) \(path): estimated before decoding")
        return result
    }

    /// The copies made before the resize are reserved too: none for a plain resize, one for a
    /// rotation, two alive at once for a rotation and a crop, at the decoded size.
    @Test func copiesBeforeTheResizeAreCountedForTheBudget() throws {
        let size = PixelSize(width: 4000, height: 3000)
        let frame = 4000 * 3000 * 4
        #expect(ImgproxyProcessor(options: try options("rs:fit:1300:1300")).intermediateBytes(for: size) == 0)
        #expect(ImgproxyProcessor(options: try options("rot:90/rs:fit:1300:1300")).intermediateBytes(for: size) == frame)
        #expect(ImgproxyProcessor(options: try options("rot:90/c:2000:1000/fl:1/rs:fit:1300:1300")).intermediateBytes(for: size) == 2 * frame)
        // A 12 MP 8-bit 4:2:0 AVIF to AVIF at 1300 px (the soak's largest) fits what one job
        // may take under the default budget (144 MiB), and a rotation adds one decoded copy.
        var info = ImageInfo(format: .avif, width: 4000, height: 3000)
        info.colorModel = "yuv420"
        info.bitDepth = 8
        func estimate(_ path: String) throws -> WorkingSetEstimate {
            let processor = ImgproxyProcessor(options: try options(path))
            var decoding = DecodingOptions()
            decoding.processedSize = ProcessedSizeHint(processor)
            return WorkingSetEstimate.estimate(info: info, sourceBytes: 5_630_826, options: decoding, outputFormat: .avif)
        }
        let plain = try estimate("rs:fit:1300:1300")
        #expect(plain.total < 144 << 20, "\(plain)")
        // The rotated result (975x1300) has as many pixels; the resampler's rows differ a little.
        let rotated = try estimate("rot:90/rs:fit:1300:1300")
        #expect(rotated.outputSize == PixelSize(width: 975, height: 1300))
        #expect(abs(rotated.processing - frame - plain.processing) < 1 << 20, "\(rotated) against \(plain)")
    }

    @Test(arguments: [
        // fit: inside the box, aspect kept, never enlarged without el.
        ("rs:fit:200:200", 200, 150, 150, 200),
        ("rs:fit:800:800", 400, 300, 300, 400),
        ("rs:fit:800:800:1", 800, 600, 600, 800),
        // fill: covers the box, the excess cropped.
        ("rs:fill:200:200", 200, 200, 200, 200),
        ("rs:fill:200:100", 200, 100, 200, 100),
        ("rs:fill:800:600", 400, 300, 300, 400),
        // fill-down: too small to fill keeps the requested aspect ratio.
        ("rs:fill-down:800:400", 400, 200, 300, 150),
        ("rs:fill-down:200:200", 200, 200, 200, 200),
        // force: exactly the size; without el a side that would grow keeps the source's and
        // the other shrinks by the same factor (imgproxy's scale rule).
        ("rs:force:200:100", 200, 100, 200, 100),
        ("rs:force:500:100", 400, 80, 300, 60),
        // force with a side of 0 keeps that side of the source.
        ("rs:force:200:0", 200, 300, 200, 400),
        ("rs:force:0:100", 400, 100, 300, 100),
        // auto: fill when orientations match, else fit.
        ("rs:auto:200:100", 200, 100, 75, 100),
        ("rs:auto:100:200", 100, 75, 100, 200),
        // one side only, dpr, size/s.
        ("w:100", 100, 75, 100, 133),
        ("h:100", 133, 100, 75, 100),
        ("rs:fit:100:100/dpr:2", 200, 150, 150, 200),
        ("s:120:120", 120, 90, 90, 120),
        // extend: the requested size, the image centred.
        ("rs:fit:800:800:0:1", 800, 800, 800, 800),
        ("rs:fill:500:500:0:1", 500, 500, 500, 500),
    ])
    func documentedResults(_ path: String, _ lw: Int, _ lh: Int, _ pw: Int, _ ph: Int) throws {
        #expect(try size(Self.landscape, path) == PixelSize(width: lw, height: lh), "landscape \(path)")
        #expect(try size(Self.portrait, path) == PixelSize(width: pw, height: ph), "portrait \(path)")
    }

    /// Every other option that changes the result's size is known before decoding too.
    @Test(arguments: [
        "rs:fit:1300:1300", "rs:fill:1300:900", "rs:fill-down:1300:900", "rs:force:1300:200", "rs:force:1300:200:1",
        "rs:auto:1300:100", "rs:fit:1300:1300:1", "rs:fill:1300:900:1", "w:50/el:1/dpr:3", "rs:fit:100:100/z:2.5",
        "c:150:100/rs:fit:1300:0", "c:0.5:0.5:ea/rs:fill:90:90:1", "rs:fit:100:100/mw:250", "rs:fit:100:100/mh:500",
        "rs:fit:200:200/pd:10:20:30:40", "rs:fit:200:200/pd:5/dpr:2", "rs:fit:120:80:0:1/exar:1", "rs:fill:120:80/exar:1",
        "rs:fit:100:100/exar:1/ex:1", "rs:fit:200:150/rot:90", "rs:fill:120:80/rot:270/pd:4", "rs:fit:2000:2000:1/mrd:500",
        "rs:fit:500:500:1:1/pd:50/mrd:300", "rs:fit:150:150/bl:2/round_corner:10/border:3:ff0000", "rs:fit:0:0",
    ])
    func theResultSizeIsKnownBeforeDecoding(_ path: String) throws {
        for image in [Self.landscape, Self.portrait] { _ = try size(image, path) }
    }

    /// A trim is only known from the pixels, and without auto-rotation the stored orientation
    /// may swap the sides: the estimate bounds the result.
    @Test func aTrimOrAStoredOrientationIsBoundedByTheEstimate() throws {
        let unrotated = ImgproxyProcessor(options: try options("ar:0/rs:fit:100:300"))
        let made = try unrotated.process(Self.landscape).pixelSize
        let bound = unrotated.outputSize(for: Self.landscape.pixelSize)
        #expect(made == PixelSize(width: 100, height: 75) && bound == PixelSize(width: 100, height: 133))
        let processor = ImgproxyProcessor(options: try options("t:10/rs:fit:1000:1000"))
        let framed = TestImages.halves(width: 400, height: 300).embedded(in: PixelSize(width: 440, height: 340), at: (20, 20),
                                                                         background: RGBA(red: 255, green: 255, blue: 255))
        let result = try processor.process(framed).pixelSize
        let estimate = processor.outputSize(for: framed.pixelSize)
        #expect(result.width < framed.width && result.width <= estimate.width && result.height <= estimate.height)
    }

    @Test func fillCropFollowsGravity() throws {
        // 400x300, left red, right blue; fill 100x100 scales to 133x100 and crops 100 wide.
        let west = try ImgproxyProcessor(options: options("rs:fill:100:100/g:we")).process(Self.landscape)
        #expect(west.pixel(x: 60, y: 50).isClose(to: RGBA(red: 220, green: 0, blue: 0)))
        let east = try ImgproxyProcessor(options: options("rs:fill:100:100/g:ea")).process(Self.landscape)
        #expect(east.pixel(x: 40, y: 50).isClose(to: RGBA(red: 0, green: 0, blue: 220)))
        let focus = try ImgproxyProcessor(options: options("rs:fill:100:100/g:fp:1:0.5")).process(Self.landscape)
        #expect(focus.pixel(x: 40, y: 50).isClose(to: RGBA(red: 0, green: 0, blue: 220)))
        // North keeps the green top band of a marked image.
        let marked = TestImages.halves(width: 300, height: 400, markTop: true)
        let north = try ImgproxyProcessor(options: options("rs:fill:300:100/g:no")).process(marked)
        #expect(north.pixel(x: 10, y: 10).isClose(to: RGBA(red: 0, green: 200, blue: 0)))
        let south = try ImgproxyProcessor(options: options("rs:fill:300:100/g:so")).process(marked)
        #expect(south.pixel(x: 10, y: 10).isClose(to: RGBA(red: 220, green: 0, blue: 0)))
    }

    @Test func cropBeforeResize() throws {
        let left = try ImgproxyProcessor(options: options("c:100:300:we")).process(Self.landscape)
        #expect(left.pixelSize == PixelSize(width: 100, height: 300))
        #expect(left.pixel(x: 99, y: 10).isClose(to: RGBA(red: 220, green: 0, blue: 0)))
        let relative = try ImgproxyProcessor(options: options("c:0.5:0.5:ea/w:50")).process(Self.landscape)
        #expect(relative.pixelSize == PixelSize(width: 50, height: 38))
        #expect(relative.pixel(x: 5, y: 5).isClose(to: RGBA(red: 0, green: 0, blue: 220)))
        #expect(ImgproxyProcessor(options: try options("c:10:10")).decodingTarget == nil)
    }

    @Test func rotateAndBackgroundAndExtend() throws {
        let rotated = try ImgproxyProcessor(options: options("rot:90")).process(Self.landscape)
        #expect(rotated.pixelSize == PixelSize(width: 300, height: 400))
        // Turned clockwise, the red left half is now on top.
        #expect(rotated.pixel(x: 150, y: 20).isClose(to: RGBA(red: 220, green: 0, blue: 0)))
        #expect(rotated.pixel(x: 150, y: 380).isClose(to: RGBA(red: 0, green: 0, blue: 220)))
        let extended = try ImgproxyProcessor(options: options("rs:fit:600:300:0:1/bg:00ff00")).process(Self.landscape)
        #expect(extended.pixelSize == PixelSize(width: 600, height: 300))
        #expect(extended.pixel(x: 10, y: 150) == RGBA(red: 0, green: 255, blue: 0))
        #expect(extended.pixel(x: 110, y: 150).isClose(to: RGBA(red: 220, green: 0, blue: 0)))
        let transparent = try ImgproxyProcessor(options: options("rs:fit:600:300:0:1")).process(Self.landscape)
        #expect(transparent.pixel(x: 10, y: 150).alpha == 0)
        let half = AlcedoImage(width: 2, height: 1, pixels: [0, 0, 0, 0, 255, 255, 255, 128])
        let flat = try ImgproxyProcessor(options: options("bg:ff0000")).process(half)
        #expect(flat.pixel(x: 0, y: 0) == RGBA(red: 255, green: 0, blue: 0))
        #expect(flat.pixel(x: 1, y: 0).alpha == 255)
    }

    @Test func blurSharpenAndExtras() throws {
        let edge = TestImages.halves(width: 40, height: 10)
        let blurred = try ImgproxyProcessor(options: options("bl:3")).process(edge)
        let mixed = blurred.pixel(x: 20, y: 5)
        #expect(mixed.red > 40 && mixed.blue > 40, "the edge is blurred: \(mixed)")
        let soft = try ImgproxyProcessor(options: options("bl:2")).process(edge)
        let sharpened = try ImgproxyProcessor(options: options("sh:2")).process(soft)
        let before = abs(Int(soft.pixel(x: 18, y: 5).red) - Int(soft.pixel(x: 21, y: 5).red))
        let after = abs(Int(sharpened.pixel(x: 18, y: 5).red) - Int(sharpened.pixel(x: 21, y: 5).red))
        #expect(after > before, "sharpening steepens the edge: \(before) -> \(after)")
        let rounded = try ImgproxyProcessor(options: options("round_corner:10")).process(Self.landscape)
        #expect(rounded.pixel(x: 0, y: 0).alpha == 0 && rounded.pixel(x: 200, y: 150).alpha == 255)
        let bordered = try ImgproxyProcessor(options: options("border:4:00ff00")).process(Self.landscape)
        #expect(bordered.pixel(x: 1, y: 150).isClose(to: RGBA(red: 0, green: 255, blue: 0)))
        let tinted = try ImgproxyProcessor(options: options("tint:ffffffff")).process(Self.landscape)
        #expect(tinted.pixel(x: 10, y: 10) == RGBA(red: 255, green: 255, blue: 255))
    }

    @Test func pageKeepsOneFrame() throws {
        let animated = try ImageCodecRegistry.shared.decode(TestImages.animatedGIF(width: 40, height: 40))
        #expect(animated.frames.count == 2)
        let second = try ImgproxyProcessor(options: options("pg:1")).process(animated)
        #expect(second.frames.count == 1)
        #expect(second.pixel(x: 5, y: 2).isClose(to: RGBA(red: 0, green: 200, blue: 0)))
        let resized = try ImgproxyProcessor(options: options("w:20")).process(animated)
        #expect(resized.frames.count == 2 && resized.width == 20)
    }

    @Test func resultsOverTheSideLimitAreRefusedBeforeResampling() throws {
        let processor = ImgproxyProcessor(options: try options("rs:fit:5000:5000:1"), maximumResultSide: 1000)
        #expect(throws: AlcedoError.self) { try processor.process(Self.landscape) }
        do {
            _ = try processor.process(Self.landscape)
        } catch {
            guard case .outputTooLarge(_, let size, let limit)? = error.processorCause else { throw error }
            #expect(size == PixelSize(width: 5000, height: 3750) && limit == 1000)
        }
    }

    @Test func identifierIgnoresEncodingOnlyOptions() throws {
        let a = ImgproxyProcessor(options: try options("w:10/q:50/f:png/cb:1"))
        let b = ImgproxyProcessor(options: try options("w:10"))
        let c = ImgproxyProcessor(options: try options("w:11"))
        #expect(a.identifier == b.identifier)
        #expect(a.identifier != c.identifier)
    }
}
