import Foundation
import Testing
@testable import Alcedo

/// PSNR in dB over the colour channels of two RGBA buffers (alpha left out).
func gifColorPSNR(_ a: [UInt8], _ b: [UInt8]) -> Double {
    PixelCompare.psnr(a.enumerated().filter { $0.offset % 4 != 3 }.map(\.element),
                      b.enumerated().filter { $0.offset % 4 != 3 }.map(\.element))
}

/// One row of `gif-generated/references.json`.
struct GIFReference: Codable, Sendable, CustomTestStringConvertible {
    var file: String
    var width: Int
    var height: Int
    var loopCount: Int
    var durations: [Double]
    /// ``PNGGIFDigest`` of each composited frame.
    var digests: [String]
    /// Fully transparent pixels of the first frame.
    var transparentPixels: Int

    var testDescription: String { file }

    static let all: [GIFReference] = pngGIFReferenceRows("gif-generated/references.json")
}

/// The GIFs of giflib and Go against references made by a separate GIF reader and compositor
/// (`gif-generated/make_references.py`, itself checked against Pillow and giflib's `gif2rgb`).
@Suite("GIF reference decodes")
struct GIFReferenceTests {
    @Test func everyFixtureHasAReference() throws {
        let count = try Fixtures.files(in: "giflib/pic", suffix: ".gif").count
            + Fixtures.files(in: "go-image/image-testdata", suffix: ".gif").count
        #expect(count == 13)
        #expect(GIFReference.all.count == count)
    }

    @Test(arguments: GIFReference.all)
    func decodesLikeTheReference(_ reference: GIFReference) throws {
        let data = try Fixtures.data(reference.file)
        let image = try GIFDecoder().decode(data, options: .default)
        #expect(image.width == reference.width && image.height == reference.height)
        #expect(image.frames.count == reference.digests.count)
        #expect(image.frames.map { PNGGIFDigest.of($0.pixels) } == reference.digests)
        #expect(image.frames.map(\.duration) == reference.durations)
        #expect(image.loopCount == reference.loopCount)
        #expect(image.sourceFormat == .gif)
        let transparent = stride(from: 3, to: image.pixels.count, by: 4).filter { image.pixels[$0] == 0 }.count
        #expect(transparent == reference.transparentPixels)

        let info = try GIFDecoder().info(for: data, options: .default)
        #expect(info == ImageInfo(format: .gif, width: reference.width, height: reference.height,
                                  frameCount: reference.digests.count, loopCount: reference.loopCount,
                                  frameDurations: reference.durations, hasAlpha: info.hasAlpha))
        #expect(info.hasAlpha == (reference.transparentPixels > 0 || reference.file.hasSuffix("welcome2.gif")))

        let first = try GIFDecoder().decode(data, options: DecodingOptions(firstFrameOnly: true))
        #expect(first.frames.count == 1 && first.loopCount == 0 && first.frames[0].duration == 0)
        #expect(PNGGIFDigest.of(first.pixels) == reference.digests[0])
    }

    /// giflib's own reference decodes (`gif2rgb -1`): gif2rgb paints every image of the file on
    /// one screen in file order, ignoring transparency and disposal, and writes RGB. Where the
    /// last composited frame is opaque, it must show the same colour. (Transparent pixels are
    /// left out: gif2rgb paints the transparent index's palette colour there.) For still images
    /// the last frame is the first.
    @Test(arguments: ["fire", "gifgrid", "porsche", "solid2", "treescap", "treescap-interlaced", "welcome2", "x-trans"])
    func opaquePixelsMatchGif2rgb(name: String) throws {
        let image = try GIFDecoder().decode(Fixtures.data("giflib/pic/\(name).gif"), options: .default)
        let reference = try [UInt8](Fixtures.data("giflib/tests/\(name).rgb"))
        #expect(reference.count == image.width * image.height * 3)
        let last = image.frames[image.frames.count - 1].pixels
        var compared = 0, mismatches = 0
        for pixel in 0..<(image.width * image.height) where last[pixel * 4 + 3] == 255 {
            compared += 1
            if last[pixel * 4] != reference[pixel * 3] || last[pixel * 4 + 1] != reference[pixel * 3 + 1]
                || last[pixel * 4 + 2] != reference[pixel * 3 + 2] { mismatches += 1 }
        }
        #expect(mismatches == 0)
        #expect(compared > 500)
    }

    @Test func interlacedFilesDecodeLikeTheirProgressiveTwins() throws {
        let pairs = [("giflib/pic/treescap-interlaced.gif", "giflib/pic/treescap.gif"),
                     ("go-image/image-testdata/video-001.interlaced.gif", "go-image/image-testdata/video-001.gif")]
        for (interlaced, progressive) in pairs {
            let a = try GIFDecoder().decode(Fixtures.data(interlaced), options: .default)
            let b = try GIFDecoder().decode(Fixtures.data(progressive), options: .default)
            let same = a.pixels == b.pixels
            #expect(same, "\(interlaced)")
        }
    }

    /// Go's GIFs are quantised from `video-001.png`: they are compared by PSNR (the 8-bit GIF
    /// measures 34.5 dB and the 5-bit one 27.3 dB with Pillow), the grey one by its largest
    /// difference (its 128-entry grey palette is up to 4 levels away).
    @Test func goImagesAreCloseToTheirPNGs() throws {
        let png = try PNGDecoder().decode(Fixtures.data("go-image/image-testdata/video-001.png"), options: .default)
        for (file, minimum) in [("video-001.gif", 34.5), ("video-001.interlaced.gif", 34.5), ("video-001.5bpp.gif", 27.2)] {
            let gif = try GIFDecoder().decode(Fixtures.data("go-image/image-testdata/" + file), options: .default)
            #expect(gifColorPSNR(gif.pixels, png.pixels) >= minimum, "\(file)")
        }
        let grayPNG = try PNGDecoder().decode(Fixtures.data("go-image/image-testdata/video-005.gray.png"), options: .default)
        let grayGIF = try GIFDecoder().decode(Fixtures.data("go-image/image-testdata/video-005.gray.gif"), options: .default)
        let worst = zip(grayPNG.pixels, grayGIF.pixels).map { abs(Int($0) - Int($1)) }.max() ?? 255
        #expect(worst <= 4)
    }
}
