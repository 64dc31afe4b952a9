import Alcedo
@testable import AlcedoServer
import Foundation
import Testing

/// imgproxy 4's processing options, one by one, on a gradient source (red = x, green = y) so a
/// probe pixel shows which source pixel landed where. Expected positions follow imgproxy's
/// placement rule (centre = (free + 1) / 2 rounded half to even, offsets of 1 or more are
/// pixels times dpr, smaller ones fractions of the image).
@Suite("imgproxy options")
struct ImgproxyOptionTests {
    static let landscape = TestImages.gradient(width: 200, height: 100)
    static let portrait = TestImages.gradient(width: 100, height: 200)

    private func options(_ path: String) throws -> ProcessingOptions {
        try ImgproxyPath.parse("/unsafe/\(path)/plain/http://a.test/x").path.options
    }

    private func run(_ path: String, _ image: AlcedoImage = landscape, watermark: WatermarkImage? = nil) throws -> AlcedoImage {
        try ImgproxyProcessor(options: options(path), watermark: watermark).process(image)
    }

    private static func source(_ image: AlcedoImage, _ x: Int, _ y: Int) -> RGBA { image.pixel(x: x, y: y) }

    // MARK: Geometry

    @Test(arguments: [
        // min-width / min-height: the smaller side grows to the minimum, then the target crops.
        ("rs:fit:0:40/mw:120", 120, 40, 120, 40),
        ("mw:150", 200, 100, 150, 300),
        ("rs:fit:50:0/mh:60", 50, 60, 50, 100),
        // zoom: one factor or two, after the size; never enlarging without el.
        ("z:0.5", 100, 50, 50, 100),
        ("z:0.5:0.25", 100, 25, 50, 50),
        ("rs:fit:100:100/z:0.5", 50, 25, 25, 50),
        ("z:2", 200, 100, 100, 200),
        ("z:2/el:1", 400, 200, 200, 400),
        // dpr multiplies the requested size but never enlarges without el.
        ("rs:fit:50:50/dpr:2", 100, 50, 50, 100),
        ("rs:fit:150:150/dpr:2", 200, 100, 100, 200),
        ("rs:fit:150:150/dpr:2/el:1", 300, 150, 150, 300),
        // dpr is capped where the source runs out: 200x100 fills 100x100 at most.
        ("rs:fill:50:50/dpr:3", 100, 100, 100, 100),
        // force: 0 keeps the source side; without el the scale rule of imgproxy.
        ("rs:force:100:0", 100, 100, 100, 200),
        ("rs:force:0:50", 200, 50, 100, 50),
        ("rs:force:400:50", 200, 25, 100, 13),
        ("rs:force:400:50/el:1", 400, 50, 400, 50),
        // padding (CSS order), scaled by dpr.
        ("rs:fit:50:50/pd:10", 70, 45, 45, 70),
        ("rs:fit:50:50/pd:10:20/dpr:2", 180, 90, 130, 140),
        ("pd:1:2:3", 204, 104, 104, 204),
        ("pd:1:2:3:4", 206, 104, 106, 204),
    ])
    func sizes(_ path: String, _ lw: Int, _ lh: Int, _ pw: Int, _ ph: Int) throws {
        #expect(try run(path).pixelSize == PixelSize(width: lw, height: lh), "landscape \(path)")
        #expect(try run(path, Self.portrait).pixelSize == PixelSize(width: pw, height: ph), "portrait \(path)")
    }

    @Test func gravityOffsetsAsImgproxyParsesThem() throws {
        #expect(try options("g:no::5").gravity == .compass(.north, xOffset: 0, yOffset: 5))
        #expect(try options("g:ea:20").gravity == .compass(.east, xOffset: 20, yOffset: 0))
        #expect(try options("g:no:5:6/g:so").gravity == .compass(.south, xOffset: 5, yOffset: 6), "offsets not given are kept")
        #expect(try options("c:50:50:ce:0.1:0.1").crop?.gravity == .compass(.center, xOffset: 0.1, yOffset: 0.1))
        #expect(throws: ImgproxyURLError.self) { try options("g:sm:1:1") }
        #expect(throws: ImgproxyURLError.self) { try options("ex:1:sm") }
    }

    @Test func fractionalOffsetsMoveTheCropByAFractionOfTheImage() throws {
        // Crop 50x50 of 200x100: centre (151/2 → 76, 51/2 → 26) plus 10% (20, 10).
        let cut = try run("c:50:50:ce:0.1:0.1")
        #expect(cut.pixelSize == PixelSize(width: 50, height: 50))
        #expect(cut.pixel(x: 0, y: 0) == Self.source(Self.landscape, 96, 36))
        // Pixel offsets: north-west plus 30 x 7.
        let corner = try run("c:20:20:nowe:30:7")
        #expect(corner.pixel(x: 0, y: 0) == Self.source(Self.landscape, 30, 7))
    }

    @Test func resultGravityOffsetsFollowDpr() throws {
        // fill 100x100 of 200x100: no resize, east with 20 px: columns 80...179.
        let plain = try run("rs:fill:100:100/g:ea:20")
        #expect(plain.pixel(x: 0, y: 0) == Self.source(Self.landscape, 80, 0))
        // The same layout at dpr 2 from a 50x50 request: the 10 px offset becomes 20.
        let retina = try run("rs:fill:50:50/g:ea:10/dpr:2")
        #expect(retina.pixelSize == PixelSize(width: 100, height: 100))
        #expect(retina.pixel(x: 0, y: 0) == Self.source(Self.landscape, 80, 0))
        // Focus point: x 0.75 of 200 is 150, the 100 wide crop starts at 100.
        let focus = try run("rs:fill:100:100/g:fp:0.75:0.5")
        #expect(focus.pixel(x: 0, y: 0) == Self.source(Self.landscape, 100, 0))
    }

    @Test(arguments: ["rs:fit:300:300/ex:1:so:10:20", "rs:fit:300:300:0:1:so:10:20", "s:300:300:0:1:so:10:20"])
    func extendPlacesTheImageByItsGravity(_ path: String) throws {
        // 200x100 on 300x300: south, x = (101/2 → 50) + 10, y = 300 - 100 - 20.
        let result = try run(path)
        #expect(result.pixelSize == PixelSize(width: 300, height: 300))
        #expect(result.pixel(x: 60, y: 180) == Self.source(Self.landscape, 0, 0))
        #expect(result.pixel(x: 259, y: 279) == Self.source(Self.landscape, 199, 99))
        #expect(result.pixel(x: 59, y: 180).alpha == 0 && result.pixel(x: 60, y: 179).alpha == 0)
    }

    @Test func extendWithBackgroundAndDpr() throws {
        let result = try run("rs:fit:150:150/ex:1:nowe:5:5/dpr:2/bg:fff")
        // Not enlarged, dpr is capped at 200/150: a 200x200 canvas, offsets 5 x 4/3 → 7; the
        // image fills the width, so x is kept at 0.
        #expect(result.pixelSize == PixelSize(width: 200, height: 200))
        #expect(result.pixel(x: 0, y: 7) == Self.source(Self.landscape, 0, 0))
        #expect(result.pixel(x: 5, y: 5) == RGBA(red: 255, green: 255, blue: 255))
    }

    @Test func extendAspectRatio() throws {
        // fit 100x100 → 100x50, extended to 1:1 → 100x100, west: y = 51/2 → 26.
        let result = try run("rs:fit:100:100/exar:1:we")
        #expect(result.pixelSize == PixelSize(width: 100, height: 100))
        #expect(result.pixel(x: 0, y: 25).alpha == 0)
        #expect(result.pixel(x: 0, y: 26).alpha == 255)
        // Without a target size nothing changes.
        #expect(try run("exar:1").pixelSize == Self.landscape.pixelSize)
        #expect(try options("extend_ar:1:no").extendAspectRatioGravity == .compass(.north, xOffset: 0, yOffset: 0))
        #expect(try options("extend_aspect_ratio:1").extendAspectRatio)
    }

    @Test func paddingIsFilledWithTheBackground() throws {
        let result = try run("rs:fit:50:50/pd:10:20/dpr:2/bg:ff0000")
        #expect(result.pixelSize == PixelSize(width: 180, height: 90))
        #expect(result.pixel(x: 5, y: 5) == RGBA(red: 255, green: 0, blue: 0))
        #expect(result.pixel(x: 40, y: 20).isClose(to: Self.source(Self.landscape, 0, 0), tolerance: 8))
        let clear = try run("pd:5")
        #expect(clear.pixel(x: 0, y: 0).alpha == 0 && clear.pixel(x: 5, y: 5) == Self.source(Self.landscape, 0, 0))
    }

    // MARK: Pixel options

    @Test func flipMirrorsTheAxes() throws {
        #expect(try run("fl:1").pixel(x: 0, y: 0) == Self.source(Self.landscape, 199, 0))
        #expect(try run("fl::1").pixel(x: 0, y: 0) == Self.source(Self.landscape, 0, 99))
        #expect(try run("flip:1:1").pixel(x: 0, y: 0) == Self.source(Self.landscape, 199, 99))
        #expect(try run("fl:0:0") == Self.landscape)
    }

    @Test func pixelateAveragesBlocks() throws {
        let result = try run("pix:10")
        #expect(result.pixelSize == Self.landscape.pixelSize)
        #expect(result.pixel(x: 0, y: 0) == result.pixel(x: 9, y: 9))
        #expect(result.pixel(x: 0, y: 0) != result.pixel(x: 10, y: 0))
        #expect(try options("pix:1").pixelate == 0, "1 is no pixelation")
    }

    @Test func trimCutsTheBackground() throws {
        // 100x80 white with a gradient block at (10, 20) of 50x30.
        var pixels = [UInt8](repeating: 255, count: 100 * 80 * 4)
        for y in 20..<50 { for x in 10..<60 { let i = (y * 100 + x) * 4; pixels[i] = UInt8(x); pixels[i + 1] = UInt8(y); pixels[i + 2] = 0 } }
        let framed = AlcedoImage(width: 100, height: 80, pixels: pixels)
        let trimmed = try run("t:10", framed)
        #expect(trimmed.pixelSize == PixelSize(width: 50, height: 30))
        #expect(trimmed.pixel(x: 0, y: 0) == framed.pixel(x: 10, y: 20))
        // Equal sides: left 10 and right 40 are cut by 10 both; top 20 and bottom 30 by 20.
        #expect(try run("t:10::1:1", framed).pixelSize == PixelSize(width: 80, height: 40))
        // A colour that is not the background: nothing to cut.
        #expect(try run("t:10:000000", framed).pixelSize == framed.pixelSize)
        // Transparent margins are magenta for the comparison.
        var clear = [UInt8](repeating: 0, count: 20 * 20 * 4)
        for y in 5..<15 { for x in 5..<15 { let i = (y * 20 + x) * 4; clear[i] = 10; clear[i + 3] = 255 } }
        #expect(try run("t:10:ff00ff", AlcedoImage(width: 20, height: 20, pixels: clear)).pixelSize == PixelSize(width: 10, height: 10))
        #expect(try options("trim:5:f0f:t:0").trim == .init(threshold: 5, color: RGBA(red: 255, green: 0, blue: 255),
                                                            equalHorizontal: true, equalVertical: false))
    }

    // MARK: Watermark

    static let blueMark: WatermarkImage = {
        // 10x10: the left half opaque blue, the right half transparent.
        var pixels = [UInt8](repeating: 0, count: 10 * 10 * 4)
        for y in 0..<10 { for x in 0..<5 { let i = (y * 10 + x) * 4; pixels[i + 2] = 255; pixels[i + 3] = 255 } }
        let data = try! ImageCodecRegistry.shared.encode(AlcedoImage(width: 10, height: 10, pixels: pixels), as: .png)
        return try! WatermarkImage(data: data)
    }()
    static let white = AlcedoImage(width: 100, height: 100, pixels: [UInt8](repeating: 255, count: 100 * 100 * 4))
    static let blue = RGBA(red: 0, green: 0, blue: 255)

    @Test func watermarkPositionsAndOffsets() throws {
        // South-east with 5 px: the mark spans 85...94; its blue half 85...89.
        let corner = try run("wm:1:soea:5:5", Self.white, watermark: Self.blueMark)
        #expect(corner.pixel(x: 85, y: 85) == Self.blue && corner.pixel(x: 84, y: 85) == RGBA(red: 255, green: 255, blue: 255))
        #expect(corner.pixel(x: 90, y: 90) == RGBA(red: 255, green: 255, blue: 255))
        // Offsets follow dpr: rs:fit:50:50 with dpr 2 keeps 100x100, the offset 5 becomes 10.
        let retina = try run("rs:fit:50:50/dpr:2/wm:1:nowe:5:5", Self.white, watermark: Self.blueMark)
        #expect(retina.pixel(x: 10, y: 10) == Self.blue && retina.pixel(x: 9, y: 10) != Self.blue)
        // Opacity halves the blue.
        let faint = try run("wm:0.5:nowe", Self.white, watermark: Self.blueMark)
        #expect(faint.pixel(x: 0, y: 0).isClose(to: RGBA(red: 128, green: 128, blue: 255), tolerance: 2))
        // Focus point: centred on (0.5, 0.5) → starts at 45.
        let point = try run("wm:1:fp:0.5:0.5", Self.white, watermark: Self.blueMark)
        #expect(point.pixel(x: 45, y: 45) == Self.blue && point.pixel(x: 44, y: 45) != Self.blue)
        // Scale: fitted into half the image (50x50), the blue half 0...24.
        let big = try run("wm:1:nowe:0:0:0.5", Self.white, watermark: Self.blueMark)
        #expect(big.pixel(x: 5, y: 45) == Self.blue && big.pixel(x: 45, y: 20) == RGBA(red: 255, green: 255, blue: 255))
        #expect(big.pixel(x: 5, y: 55) == RGBA(red: 255, green: 255, blue: 255))
        // Without a watermark image the option changes nothing.
        #expect(try run("wm:1:soea", Self.white) == Self.white)
    }

    @Test func watermarkReplicates() throws {
        // 11 tiles across 100 px, centred: shifted 5 px, so blue starts at x 5.
        let tiled = try run("wm:1:re", Self.white, watermark: Self.blueMark)
        #expect(tiled.pixel(x: 0, y: 0) != Self.blue && tiled.pixel(x: 5, y: 0) == Self.blue && tiled.pixel(x: 15, y: 50) == Self.blue)
        // 10 px spacing: tiles of 20 with the mark at 5; five tiles exactly.
        let spaced = try run("wm:1:re:10", Self.white, watermark: Self.blueMark)
        #expect(spaced.pixel(x: 5, y: 5) == Self.blue && spaced.pixel(x: 10, y: 5) != Self.blue && spaced.pixel(x: 25, y: 5) == Self.blue)
    }

    @Test func watermarkScaledCopiesAreCached() throws {
        let mark = Self.blueMark
        let first = mark.scaled(to: PixelSize(width: 20, height: 20))
        #expect(mark.scaled(to: PixelSize(width: 20, height: 20)) == first)
        #expect(ImgproxyProcessor(options: try options("wm:1"), watermark: mark).identifier.contains(mark.identifier))
    }
}
