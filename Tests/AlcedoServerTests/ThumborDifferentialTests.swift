import Alcedo
@testable import AlcedoServer
import AlcedoTestSupport
import AsyncHTTPClient
import Foundation
import Testing

/// `--dialect thumbor` against the real thumbor 7.8 (from PyPI, in the test virtual
/// environment), live: the same URLs, taken from thumbor's tests and documentation
/// (tests/handlers/test_base_handler.py, tests/filters/*, tests/fixtures/transformer_test_data.py,
/// docs/usage.rst, docs/filters/*.rst), sent to both (Alcedo: the release `alcedo serve`, as
/// `make install` installs it), with the same origin on loopback. Each
/// answer must have the same status and format, a size within 1 pixel, and pixels within a
/// PSNR that tolerates resampler and encoder differences but not a missing filter or a wrong crop.
@Suite("thumbor dialect against thumbor 7.8", .serialized)
struct ThumborDifferentialTests {
    /// The lowest PSNR (dB, RGB over white) two answers may differ by.
    static let minimumPSNR = 22.0

    /// URL paths after `/unsafe/`, `ORIGIN` standing for the loopback origin's `host:port`.
    static let paths: [String] = [
        // tests/handlers/test_base_handler.py, docs/usage.rst: sizes, fit-in, flips, alignment, crops.
        "ORIGIN/dusk.jpg",
        "300x200/ORIGIN/dusk.jpg",
        "200x300/ORIGIN/dusk.jpg",
        "300x0/ORIGIN/dusk.jpg",
        "0x200/ORIGIN/dusk.jpg",
        "x150/ORIGIN/valley.jpg",
        "fit-in/300x200/ORIGIN/dusk.jpg",
        "fit-in/300x300/ORIGIN/valley.jpg",
        "fit-in/1000x1000/ORIGIN/dusk.jpg",
        "full-fit-in/300x200/ORIGIN/dusk.jpg",
        "adaptive-fit-in/200x300/ORIGIN/dusk.jpg",
        "adaptive-full-fit-in/200x300/ORIGIN/dusk.jpg",
        "-300x200/ORIGIN/dusk.jpg",
        "300x-200/ORIGIN/dusk.jpg",
        "-300x-200/ORIGIN/dusk.jpg",
        "300x200/left/top/ORIGIN/valley.jpg",
        "300x200/right/bottom/ORIGIN/valley.jpg",
        "200x300/left/ORIGIN/valley.jpg",
        "200x300/right/ORIGIN/valley.jpg",
        "400x100/top/ORIGIN/valley.jpg",
        "400x100/bottom/ORIGIN/valley.jpg",
        "300x200/smart/ORIGIN/dusk.jpg",
        "-200x300/left/ORIGIN/valley.jpg",
        "50x50:350x250/ORIGIN/dusk.jpg",
        "50x50:350x250/300x200/ORIGIN/dusk.jpg",
        "0x0:300x450/fit-in/300x300/ORIGIN/dusk.jpg",
        "600x600/ORIGIN/badge.png",
        "http://ORIGIN/dusk.jpg",
        "300x200/http%3A%2F%2FORIGIN%2Fdusk.jpg",
        // docs/filters/*.rst and tests/filters/*.
        "300x200/filters:quality(40)/ORIGIN/dusk.jpg",
        "300x200/filters:format(png)/ORIGIN/dusk.jpg",
        "300x200/filters:format(webp)/ORIGIN/dusk.jpg",
        "300x200/filters:format(gif)/ORIGIN/dusk.jpg",
        "300x200/filters:format(bogus)/ORIGIN/dusk.jpg",
        "300x200/filters:grayscale()/ORIGIN/dusk.jpg",
        "300x200/filters:brightness(40)/ORIGIN/dusk.jpg",
        "300x200/filters:brightness(-40)/ORIGIN/dusk.jpg",
        "300x200/filters:contrast(40)/ORIGIN/dusk.jpg",
        "300x200/filters:contrast(-40)/ORIGIN/dusk.jpg",
        "300x200/filters:rgb(20,-20,40)/ORIGIN/dusk.jpg",
        "300x200/filters:saturation(0.5)/ORIGIN/dusk.jpg",
        "300x200/filters:saturation(2)/ORIGIN/valley.jpg",
        "300x200/filters:colorize(50,20,0,ff0000)/ORIGIN/dusk.jpg",
        "300x200/filters:equalize()/ORIGIN/dusk.jpg",
        "300x200/filters:blur(5)/ORIGIN/dusk.jpg",
        "300x200/filters:blur(4,2)/ORIGIN/dusk.jpg",
        "300x200/filters:sharpen(2,1.0,true)/ORIGIN/dusk.jpg",
        "300x200/filters:rotate(90)/ORIGIN/dusk.jpg",
        "300x200/filters:rotate(180)/ORIGIN/dusk.jpg",
        "300x200/filters:rotate(45)/ORIGIN/dusk.jpg",
        "fit-in/300x300/filters:fill(blue)/ORIGIN/dusk.jpg",
        "fit-in/300x300/filters:fill(00ff00)/ORIGIN/valley.jpg",
        "fit-in/300x300/filters:fill(white)/ORIGIN/badge.png",
        "200x200/filters:background_color(ff0000)/ORIGIN/badge.png",
        "200x200/filters:round_corner(20,255,255,255)/ORIGIN/dusk.jpg",
        "600x600/filters:no_upscale()/ORIGIN/badge.png",
        "fit-in/600x600/filters:upscale()/ORIGIN/badge.png",
        "300x300/filters:stretch()/ORIGIN/dusk.jpg",
        "300x200/filters:proportion(0.5)/ORIGIN/dusk.jpg",
        "300x300/filters:focal(0x0:300x300)/ORIGIN/valley.jpg",
        "300x300/filters:focal(600x400:750x550)/ORIGIN/valley.jpg",
        "300x200/filters:strip_exif():strip_icc()/ORIGIN/dusk.jpg",
        "300x200/filters:max_bytes(8000)/ORIGIN/dusk.jpg",
        "300x200/filters:unknown_filter(1):quality(60)/ORIGIN/dusk.jpg",
        "300x200/filters:blur(abc)/ORIGIN/dusk.jpg",
        "filters:brightness(10):contrast(10):grayscale()/ORIGIN/meadow.webp",
        // tests/filters/test_watermark.py, test_fill.py, test_sharpen.py, test_autojpg.py; trim from docs/usage.rst.
        "300x200/filters:watermark(ORIGIN/badge.png,10,-10,30)/ORIGIN/dusk.jpg",
        "300x200/filters:watermark(ORIGIN/badge.png,center,center,0,40,none)/ORIGIN/dusk.jpg",
        "300x200/filters:watermark(ORIGIN/badge.png,repeat,repeat,50,10,10)/ORIGIN/dusk.jpg",
        "300x200/filters:watermark(ORIGIN/badge.png,repeat,10,20,none,30)/ORIGIN/dusk.jpg",
        "300x200/filters:watermark(ORIGIN/badge.png,-10p,20p,0)/ORIGIN/dusk.jpg",
        "300x200/filters:watermark(ORIGIN/missing.png,0,0,0)/ORIGIN/dusk.jpg",
        "fit-in/300x300/filters:fill(auto)/ORIGIN/dusk.jpg",
        "fit-in/300x300/filters:fill(auto)/ORIGIN/valley.jpg",
        "fit-in/300x300/filters:fill(blur)/ORIGIN/dusk.jpg",
        "300x200/filters:noise(40,7)/ORIGIN/dusk.jpg",
        "300x200/filters:sharpen(1.5,0.5,false)/ORIGIN/dusk.jpg",
        // tests/filters/test_convolution.py, docs/filters/extract_focal.rst.
        "300x200/filters:convolution(1;2;1;2;4;2;1;2;1,3,true)/ORIGIN/dusk.jpg",
        "300x200/filters:convolution(-1;-1;-1;-1;8;-1;-1;-1;-1,3,false)/ORIGIN/valley.jpg",
        // The image part is a thumbor URL whose crop (0x0:400x100) would pull a crop to the top:
        // thumbor 7.8 answers the centred crop all the same.
        "300x100/filters:extract_focal()/ORIGIN/unsafe/0x0:400x100/ORIGIN/valley.jpg",
        // docs/filters/curve.rst's examples.
        "300x200/filters:curve([(0,0),(255,255)],[(0,50),(16,51),(32,69),(255,255)],[(0,0),(255,255)],[(0,0),(255,255)])/ORIGIN/dusk.jpg",
        "300x200/filters:curve([(0,0),(40,59),(255,255)],[(32,59),(64,80),(92,111),(128,153),(140,169),(164,201),(192,214),(224,215),(240,214),(255,212)],[(34,41),(64,51),(92,76),(128,112),(140,124),(164,147),(192,180),(224,216),(240,236),(255,255)],[(40,46),(64,55),(92,83),(128,127),(140,144),(164,174),(192,197),(224,199),(240,197),(255,198)])/ORIGIN/valley.jpg",
        "300x200/filters:sharpen(4,2,true)/ORIGIN/valley.jpg",
        "200x0/filters:autojpg()/ORIGIN/opaque.png",
        "200x0/filters:autojpg()/ORIGIN/badge.png",
        "200x0/ORIGIN/opaque.png",
        "trim/ORIGIN/framed.png",
        "trim:bottom-right/ORIGIN/framed.png",
        "trim:bottom-right:40/ORIGIN/framed.png",
        "trim:top-left:40/10x10:150x100/ORIGIN/framed.png",
        // Filters run in the order the URL gives them (each pair differs in thumbor itself: see orderMatters).
        "300x200/filters:grayscale():colorize(50,20,0,ff0000)/ORIGIN/dusk.jpg",
        "300x200/filters:colorize(50,20,0,ff0000):grayscale()/ORIGIN/dusk.jpg",
        "300x200/filters:brightness(40):contrast(80)/ORIGIN/dusk.jpg",
        "300x200/filters:contrast(80):brightness(40)/ORIGIN/dusk.jpg",
        "fit-in/300x300/filters:fill(red):grayscale()/ORIGIN/dusk.jpg",
        "fit-in/300x300/filters:grayscale():fill(red)/ORIGIN/dusk.jpg",
        "fit-in/300x300/filters:format(png):noise(100,7):fill(red)/ORIGIN/dusk.jpg",
        "fit-in/300x300/filters:format(png):fill(red):noise(100,7)/ORIGIN/dusk.jpg",
        "200x200/filters:round_corner(60,255,0,0):grayscale()/ORIGIN/dusk.jpg",
        "200x200/filters:grayscale():round_corner(60,255,0,0)/ORIGIN/dusk.jpg",
        "200x200/filters:round_corner(40,255,0,0):blur(8)/ORIGIN/dusk.jpg",
        "200x200/filters:blur(8):round_corner(40,255,0,0)/ORIGIN/dusk.jpg",
        "300x200/filters:watermark(ORIGIN/badge.png,center,center,0):grayscale()/ORIGIN/dusk.jpg",
        "300x200/filters:grayscale():watermark(ORIGIN/badge.png,center,center,0)/ORIGIN/dusk.jpg",
        // docs/filters.rst's pipeline example: upscale() after fill() has nothing left to enlarge.
        "fit-in/400x400/filters:watermark(ORIGIN/badge.png,10,10,50,30):blur(2):fill(red,1):upscale()/ORIGIN/opaque.png",
        "fit-in/400x400/filters:fill(red):upscale()/ORIGIN/opaque.png",
        "fit-in/400x400/filters:upscale():fill(red)/ORIGIN/opaque.png",
        // rotate, proportion and upscale act on what the filters before them left.
        "fit-in/400x200/filters:rotate(90):fill(blue)/ORIGIN/dusk.jpg",
        "fit-in/300x300/filters:fill(red):rotate(90)/ORIGIN/dusk.jpg",
        "fit-in/300x300/filters:noise(60,3):proportion(0.5)/ORIGIN/dusk.jpg",
        "fit-in/300x300/filters:proportion(0.5):fill(green)/ORIGIN/dusk.jpg",
        "fit-in/600x600/filters:round_corner(30,255,0,0):upscale()/ORIGIN/badge.png",
        // no_upscale() lowers the requested size to the source's: a fill canvas and upscale() follow it.
        "fit-in/600x600/filters:no_upscale():fill(red)/ORIGIN/badge.png",
        "fit-in/600x600/filters:fill(red):no_upscale()/ORIGIN/badge.png",
        "fit-in/600x600/filters:no_upscale():upscale()/ORIGIN/badge.png",
        "600x600/filters:no_upscale():fill(red)/ORIGIN/badge.png",
        "600x0/filters:no_upscale()/ORIGIN/badge.png",
        // round_corner paints the cut corners and keeps every pixel's alpha.
        "fit-in/300x300/filters:round_corner(40,0,0,255)/ORIGIN/badge.png",
        "fit-in/300x300/filters:round_corner(40,0,0,255,1)/ORIGIN/badge.png",
        // docs/round_corner.rst: elliptical corners (a|b) and transparent ones.
        "300x200/filters:round_corner(20|40,0,0,0)/ORIGIN/dusk.jpg",
        "300x200/filters:round_corner(60|10,255,255,255)/ORIGIN/dusk.jpg",
        "300x200/filters:format(png):round_corner(30,0,0,0,1)/ORIGIN/dusk.jpg",
        "300x200/filters:round_corner(20,255,255,255)/ORIGIN/dusk.jpg",
        "fit-in/600x600/filters:watermark(ORIGIN/badge.png,0,0,0):upscale():rotate(270)/ORIGIN/badge.png",
        // fill without fill_transparent keeps the image's transparent pixels; with it, they are filled.
        "fit-in/300x300/filters:fill(red)/ORIGIN/badge.png",
        "fit-in/300x300/filters:fill(red,1)/ORIGIN/badge.png",
        "200x200/filters:fill(red)/ORIGIN/badge.png",
        // orig is the side of the image after the crop, and counts as a given side (the crop takes its aspect ratio).
        "300xorig/ORIGIN/dusk.jpg",
        "origx200/ORIGIN/badge.png",
        "full-fit-in/300xorig/ORIGIN/dusk.jpg",
        // adaptive- with a side left to the aspect ratio swaps nothing.
        "adaptive-fit-in/0x300/ORIGIN/dusk.jpg",
        "adaptive-full-fit-in/0x300/ORIGIN/dusk.jpg",
        // trim:N reads N as the corner (not top-left, so bottom-right) with no tolerance.
        "trim:10/ORIGIN/framed.png",
        "trim:500/100x100/ORIGIN/framed.png",
        // Filters whose arguments do not match thumbor's pattern are dropped; what follows a
        // filter's ")" is not read.
        "300x200/filters:format(png,1)/ORIGIN/dusk.jpg",
        "300x200/filters:brightness(10,20)/ORIGIN/dusk.jpg",
        "300x200/filters:rgb(10,20,30,40)/ORIGIN/dusk.jpg",
        "300x200/filters:grayscale(1)/ORIGIN/dusk.jpg",
        "300x200/filters:equalize(1)/ORIGIN/dusk.jpg",
        "300x200/filters:focal(0x0:100x100,1)/ORIGIN/dusk.jpg",
        "300x200/filters:brightness(40)grayscale()/ORIGIN/dusk.jpg",
        // A part that does not match the grammar is the image's: a host thumbor's loader tries and fails on (504).
        "-10x-10:100x100/ORIGIN/dusk.jpg",
        "trim:bogus/ORIGIN/framed.png",
        "trim:top-left:10:5/ORIGIN/framed.png",
        "300x200/filters:grayscale/ORIGIN/dusk.jpg",
        // Transparency written as JPEG keeps the colours and drops the alpha (black under
        // transparent pixels after a resize, what is stored there without one); as GIF only
        // fully transparent pixels stay transparent.
        "filters:format(jpeg)/ORIGIN/ramp.png",
        "120x90/filters:format(jpeg)/ORIGIN/ramp.png",
        "fit-in/200x200/filters:format(jpeg)/ORIGIN/badge.png",
        "120x90/filters:format(gif)/ORIGIN/ramp.png",
        "fit-in/300x300/filters:fill(transparent)/ORIGIN/dusk.jpg",
        // Colours as Pillow reads them: names, 3, 4 and 8 hex digits; background_color(auto) and alpha.
        "fit-in/300x300/filters:fill(00ff0080)/ORIGIN/dusk.jpg",
        "fit-in/300x300/filters:fill(cornflowerblue)/ORIGIN/dusk.jpg",
        "fit-in/300x300/filters:fill(0f0)/ORIGIN/dusk.jpg",
        "200x200/filters:background_color(auto)/ORIGIN/badge.png",
        "200x200/filters:background_color(0000ff80)/ORIGIN/badge.png",
        "fit-in/300x300/filters:fill(blue,1)/ORIGIN/ramp.png",
        // contrast past ±100, blur's kernel cut at its radius, debug/ without the resize.
        "300x200/filters:contrast(-200)/ORIGIN/dusk.jpg",
        "300x200/filters:contrast(200)/ORIGIN/dusk.jpg",
        "300x200/filters:blur(5,200)/ORIGIN/dusk.jpg",
        "100x100/filters:blur(150)/ORIGIN/badge.png",
        "debug/300x200/ORIGIN/dusk.jpg",
        // Tiny and extreme sizes: thumbor cuts the source to the size's aspect ratio first (its
        // auto_crop, with its rounding) and then resizes, for every alignment, flip, crop and format.
        "2x1/ORIGIN/dusk.jpg",
        "1x2/ORIGIN/dusk.jpg",
        "3x1/smart/ORIGIN/dusk.jpg",
        "1x300/ORIGIN/dusk.jpg",
        "300x1/ORIGIN/valley.jpg",
        "1x1/ORIGIN/valley.jpg",
        "2x1/left/top/ORIGIN/valley.jpg",
        "1x3/right/bottom/ORIGIN/valley.jpg",
        "3x1/right/top/ORIGIN/dusk.jpg",
        "1x2/left/bottom/ORIGIN/opaque.png",
        "2x0/ORIGIN/meadow.webp",
        "0x2/ORIGIN/dusk.jpg",
        "1x0/ORIGIN/opaque.png",
        "7x5/ORIGIN/meadow.webp",
        "13x2/ORIGIN/badge.png",
        "1x4/ORIGIN/badge.png",
        "-2x1/ORIGIN/dusk.jpg",
        "-3x-1/left/top/ORIGIN/valley.jpg",
        "-1x-300/right/ORIGIN/opaque.png",
        "fit-in/2x1/ORIGIN/dusk.jpg",
        "fit-in/1x300/ORIGIN/valley.jpg",
        "full-fit-in/1x3/ORIGIN/dusk.jpg",
        // fit-in sizes from a source decoded smaller: thumbor's size, computed on the whole source.
        "fit-in/3x2/ORIGIN/meadow.webp",
        "fit-in/2x0/ORIGIN/meadow.webp",
        "full-fit-in/1x1/ORIGIN/meadow.webp",
        "full-fit-in/2x1/ORIGIN/meadow.webp",
        "full-fit-in/1x4/ORIGIN/meadow.webp",
        "full-fit-in/4x3/ORIGIN/meadow.webp",
        "full-fit-in/2x0/ORIGIN/dusk.jpg",
        "adaptive-full-fit-in/2x0/ORIGIN/valley.jpg",
        "adaptive-fit-in/1x4/ORIGIN/meadow.webp",
        "adaptive-full-fit-in/3x4/ORIGIN/dusk.jpg",
        "fit-in/4x3/filters:fill(red)/ORIGIN/meadow.webp",
        "full-fit-in/3x3/filters:fill(red)/ORIGIN/meadow.webp",
        "fit-in/3x2/filters:upscale()/ORIGIN/meadow.webp",
        // Several focal points: their centres weighted by their areas; those outside the manual crop left out.
        "300x100/filters:focal(0x0:100x100):focal(700x500:800x600)/ORIGIN/valley.jpg",
        "100x300/filters:focal(10x10:30x30):focal(500x400:700x600):focal(100x500:300x590)/ORIGIN/valley.jpg",
        "100x0:700x600/300x100/filters:focal(0x0:400x300):focal(760x560:800x600)/ORIGIN/valley.jpg",
        "2x1/filters:focal(0x0:50x50):focal(600x0:800x200)/ORIGIN/meadow.webp",
        "origx1/ORIGIN/dusk.jpg",
        "2xorig/ORIGIN/opaque.png",
        "10x10:110x60/1x3/right/ORIGIN/dusk.jpg",
        "0x0:50x50/1x300/ORIGIN/valley.jpg",
        "20x5:90x95/3x1/bottom/ORIGIN/opaque.png",
        "2x1/filters:focal(100x20:140x60)/ORIGIN/dusk.jpg",
        "3x1/filters:stretch()/ORIGIN/dusk.jpg",
        "2x1/filters:format(png)/ORIGIN/dusk.jpg",
        // Failures: thumbor's statuses.
        "ORIGIN/missing.jpg",
        "300x200/ORIGIN/text.jpg",
        "300x200/ORIGIN/empty.jpg",
        "300x200/",
    ]

    /// URLs held to a higher PSNR than ``minimumPSNR``: filters whose arithmetic is thumbor's
    /// own, where a different operation (an unsharp mask for the wavelet sharpen) would pass the
    /// lenient bound.
    static let strictPSNR: [String: Double] = [
        "300x200/filters:sharpen(1.5,0.5,false)/ORIGIN/dusk.jpg": 30,
        "300x200/filters:sharpen(4,2,true)/ORIGIN/valley.jpg": 30,
        "trim:bottom-right/ORIGIN/framed.png": 30,
        "fit-in/300x300/filters:fill(auto)/ORIGIN/dusk.jpg": 30,
        "300x200/filters:curve([(0,0),(255,255)],[(0,50),(16,51),(32,69),(255,255)],[(0,0),(255,255)],[(0,0),(255,255)])/ORIGIN/dusk.jpg": 30,
        "300x200/filters:convolution(1;2;1;2;4;2;1;2;1,3,true)/ORIGIN/dusk.jpg": 30,
        "150x50/filters:extract_focal()/ORIGIN/unsafe/300x100:500x300/ORIGIN/valley.jpg": 30,
        // The noise is thumbor's own (the C library's generator, seeded), in PNG answers (no JPEG loss on it): only the bars' noise differs by order.
        "fit-in/300x300/filters:format(png):noise(100,7):fill(red)/ORIGIN/dusk.jpg": 30,
        "fit-in/300x300/filters:format(png):fill(red):noise(100,7)/ORIGIN/dusk.jpg": 30,
        "200x200/filters:round_corner(40,255,0,0):blur(8)/ORIGIN/dusk.jpg": 30,
        "200x200/filters:blur(8):round_corner(40,255,0,0)/ORIGIN/dusk.jpg": 30,
    ]

    /// Pairs of ``paths`` with the same filters in the opposite order. thumbor's two answers of a
    /// pair differ by more than the bound each is held to, so one fixed order cannot match both.
    static let orderPairs: [(String, String)] = stride(from: 0, to: orderedPaths.count, by: 2).map { (orderedPaths[$0], orderedPaths[$0 + 1]) }

    static var orderedPaths: [String] {
        let first = paths.firstIndex(of: "300x200/filters:grayscale():colorize(50,20,0,ff0000)/ORIGIN/dusk.jpg") ?? 0
        return Array(paths[first..<(first + 14)])
    }

    /// URLs whose answers are known to differ, with the reason: sent to both and reported, not required to match.
    static let knownDifferences: [String: String] = [
        "300x200/filters:convolution(1;2;1;2;4;2;1;2;1,2,true)/ORIGIN/dusk.jpg":
            "a kernel with an even side: thumbor's C filter fails (500); Alcedo answers 400 (a bad URL)",
        // thumbor 7.8's _nine_patch reads the image mode from a bytes object's header instead of its
        // text (one byte per pixel, alpha at 0): it pads with white by misread amounts (17x12 more
        // here) and draws nothing. Alcedo draws the nine patch as its markers say.
        "300x200/filters:frame(ORIGIN/frame.png)/ORIGIN/dusk.jpg": "thumbor 7.8's frame pads by misread amounts and draws no frame",
        "fit-in/200x200/filters:frame(ORIGIN/frame.png)/ORIGIN/badge.png": "thumbor 7.8's frame pads by misread amounts and draws no frame",
    ]

    /// `/meta` URLs whose JSON must be equal.
    static let metaPaths: [String] = [
        "meta/300x200/ORIGIN/dusk.jpg",
        "meta/fit-in/300x200/ORIGIN/dusk.jpg",
        "meta/full-fit-in/300x200/ORIGIN/dusk.jpg",
        "meta/50x50:350x250/300x200/ORIGIN/dusk.jpg",
        "meta/-300x-200/left/top/ORIGIN/valley.jpg",
        "meta/ORIGIN/badge.png",
        "meta/200x0/ORIGIN/valley.jpg",
        "meta/300x100/filters:focal(0x0:100x100):focal(700x500:800x600)/ORIGIN/valley.jpg",
        "meta/100x0:700x600/100x300/filters:focal(0x0:400x300):focal(760x560:800x600)/ORIGIN/valley.jpg",
        "meta/full-fit-in/2x0/ORIGIN/meadow.webp",
        // Flips after a fit-in resize, no crop for a proportional side (thumbor's round(x, 2) of the ratios),
        // the trim's box as a crop (the whole image too) with the manual crop moved by it, GIF frames.
        "meta/0x200/ORIGIN/dusk.jpg",
        "meta/fit-in/-300x-200/ORIGIN/dusk.jpg",
        "meta/fit-in/300x-orig/ORIGIN/dusk.jpg",
        "meta/trim/ORIGIN/framed.png",
        "meta/trim:bottom-right/100x100/ORIGIN/framed.png",
        "meta/trim:10/ORIGIN/framed.png",
        "meta/trim/10x10:100x100/50x50/ORIGIN/framed.png",
        "meta/ORIGIN/spinner.gif",
        // The filters change the engine's size only (the source's in the JSON), not the operations;
        // focal() boxes are the focal points and move the crop.
        "meta/300x200/filters:rotate(90)/ORIGIN/dusk.jpg",
        "meta/300x200/filters:proportion(0.5)/ORIGIN/dusk.jpg",
        "meta/fit-in/600x600/filters:upscale()/ORIGIN/badge.png",
        "meta/fit-in/300x300/filters:fill(red)/ORIGIN/dusk.jpg",
        "meta/300x300/filters:focal(600x400:750x550)/ORIGIN/valley.jpg",
        "meta/trim/ORIGIN/spinner.gif",
        // The crop to a tiny or extreme size's aspect ratio.
        "meta/2x1/ORIGIN/dusk.jpg",
        "meta/1x300/right/ORIGIN/valley.jpg",
        "meta/0x1/ORIGIN/valley.jpg",
    ]

    static let samples = ["dusk.jpg", "valley.jpg", "badge.png", "meadow.webp", "spinner.gif"]

    struct Peers: Sendable {
        let thumbor: ThumborPeer
        /// The release `alcedo serve --dialect thumbor`, as `make install` installs it.
        let alcedo: ServeProcess
        let origin: TestHTTPServer
        var originHost: String { origin.url("/").host.map { "\($0):\(origin.url("/").port ?? 80)" } ?? "" }

        func stop() async {
            thumbor.stop()
            alcedo.stop()
            origin.stop()
        }
    }

    /// The peers: the loopback origin with the samples, thumbor with `settings` added to its
    /// configuration, and the release `alcedo serve --dialect thumbor` with thumbor's key and
    /// `arguments` after them.
    static func start(settings: [String] = [], arguments: [String] = []) async throws -> Peers {
        let origin = try await TestHTTPServer.start()
        let folder = MotoS3Server.repositoryRoot.appendingPathComponent("Sources/alcedo/Demo/Samples")
        for name in samples {
            var data = try Data(contentsOf: folder.appendingPathComponent(name))
            // The photos at half size (600x450 and 800x600): the same content, quicker answers from both.
            if name.hasSuffix(".jpg") {
                let image = try ImageCodecRegistry.shared.decode(data)
                data = try ImageCodecRegistry.shared.encode(image.resized(to: PixelSize(width: image.width / 2, height: image.height / 2)),
                                                            as: .jpeg, options: EncodingOptions(quality: 92))
            }
            origin.route("/" + name, .ok(data, contentType: name.hasSuffix(".png") ? "image/png" : "image/jpeg"))
        }
        // An opaque PNG (for autojpg) and a photo framed in near-white with one blue corner pixel (for trim).
        let photo = try ImageCodecRegistry.shared.decode(Data(contentsOf: folder.appendingPathComponent("dusk.jpg")))
        let small = photo.resized(to: PixelSize(width: 160, height: 120))
        origin.route("/opaque.png", .ok(try ImageCodecRegistry.shared.encode(small, as: .png), contentType: "image/png"))
        var framed = [UInt8](repeating: 250, count: 200 * 150 * 4)
        for y in 0..<120 {
            for x in 0..<160 {
                for c in 0..<4 { framed[((y + 10) * 200 + x + 20) * 4 + c] = small.frames[0].pixels[(y * 160 + x) * 4 + c] }
            }
        }
        for c in 0..<4 { framed[c] = [0, 0, 255, 255][c] }
        for index in stride(from: 3, to: framed.count, by: 4) { framed[index] = 255 }
        let framedImage = AlcedoImage(width: 200, height: 150, pixels: framed)
        origin.route("/framed.png", .ok(try ImageCodecRegistry.shared.encode(framedImage, as: .png), contentType: "image/png"))
        // The small photo with alpha rising from 0 (the left quarter, red stored under it) to opaque.
        var ramp = small.frames[0].pixels
        for y in 0..<120 {
            for x in 0..<160 {
                let index = (y * 160 + x) * 4
                ramp[index + 3] = UInt8(max(0, x - 40) * 255 / 119)
                if x <= 40 { ramp.replaceSubrange(index..<(index + 3), with: [255, 0, 0]) }
            }
        }
        origin.route("/ramp.png", .ok(try ImageCodecRegistry.shared.encode(AlcedoImage(width: 160, height: 120, pixels: ramp), as: .png),
                                      contentType: "image/png"))
        origin.route("/text.jpg", .ok(Data("not an image\n".utf8), contentType: "image/jpeg"))
        // A 20x20 nine patch: a 4-pixel band shading from dark green to orange, the middle 8
        // columns and rows stretchable, the content area inset 4 pixels.
        var patch: [UInt8] = []
        for y in 0..<20 {
            for x in 0..<20 {
                let marked: Bool
                if x == 0 && y == 0 || x == 19 && y == 19 || x == 0 && y == 19 || x == 19 && y == 0 {
                    marked = false
                } else if y == 0 || x == 0 {
                    marked = (6...13).contains(y == 0 ? x : y)
                } else if y == 19 || x == 19 {
                    marked = (5...14).contains(y == 19 ? x : y)
                } else {
                    let band = min(x - 1, y - 1, 18 - x, 18 - y)
                    patch += band < 4 ? [UInt8(20 + band * 60), UInt8(90 + band * 20), 30, UInt8(255 - band * 40)] : [0, 0, 0, 0]
                    continue
                }
                patch += marked ? [0, 0, 0, 255] : [0, 0, 0, 0]
            }
        }
        origin.route("/frame.png", .ok(try ImageCodecRegistry.shared.encode(AlcedoImage(width: 20, height: 20, pixels: patch), as: .png),
                                       contentType: "image/png"))
        // A path that is a thumbor URL, for extract_focal (the half-size valley itself).
        let valley = try ImageCodecRegistry.shared.decode(Data(contentsOf: folder.appendingPathComponent("valley.jpg")))
        let half = valley.resized(to: PixelSize(width: valley.width / 2, height: valley.height / 2))
        let host = origin.url("/").host.map { "\($0):\(origin.url("/").port ?? 80)" } ?? ""
        origin.route("/unsafe/0x0:400x100/\(host)/valley.jpg",
                     .ok(try ImageCodecRegistry.shared.encode(half, as: .jpeg, options: EncodingOptions(quality: 92)), contentType: "image/jpeg"))
        origin.route("/empty.jpg", .ok(Data(), contentType: "image/jpeg"))
        let thumbor = try await ThumborPeer.start(settings: settings)
        let alcedo = try await ServeProcess.start(["--dialect", "thumbor", "--thumbor-security-key", thumbor.securityKey] + arguments)
        return Peers(thumbor: thumbor, alcedo: alcedo, origin: origin)
    }

    struct Answer: Sendable {
        let status: Int
        let contentType: String?
        let body: Data
    }

    static func get(_ url: String) async throws -> Answer {
        let reply = try await ServerHarness.sharedClient.execute(HTTPClientRequest(url: url), timeout: .seconds(300))
        var body = Data()
        for try await chunk in reply.body { body.append(contentsOf: chunk.readableBytesView) }
        return Answer(status: Int(reply.status.code), contentType: reply.headers.first(name: "Content-Type"), body: body)
    }

    /// Compares one URL's answers; `nil` when they match, else what differs.
    static func compare(_ path: String, peers: Peers) async throws -> String? {
        let concrete = path.replacing("ORIGIN", with: peers.originHost)
        let theirs = try await get(peers.thumbor.baseURL + "/unsafe/" + concrete)
        let ours = try await get(peers.alcedo.baseURL + "/unsafe/" + concrete)
        guard theirs.status == ours.status else { return "status \(ours.status), thumbor \(theirs.status)" }
        guard theirs.status == 200 else { return nil }
        let theirFormat = ImageFormat.sniff(theirs.body), ourFormat = ImageFormat.sniff(ours.body)
        guard theirFormat == ourFormat else { return "format \(ourFormat), thumbor \(theirFormat)" }
        // Decoding and comparing pixels on a thread of its own: the servers in this process need the pool.
        return try await offPool { () throws -> String? in
            let theirImage = try ImageCodecRegistry.shared.decode(theirs.body)
            let ourImage = try ImageCodecRegistry.shared.decode(ours.body)
            guard abs(theirImage.width - ourImage.width) <= 1, abs(theirImage.height - ourImage.height) <= 1 else {
                return "size \(ourImage.width)x\(ourImage.height), thumbor \(theirImage.width)x\(theirImage.height)"
            }
            let psnr = Self.psnr(ourImage, theirImage)
            if let strict = strictPSNR[path] { print("  PSNR \(Int(psnr)) dB (at least \(Int(strict))): /unsafe/\(path)") }
            guard psnr >= strictPSNR[path] ?? minimumPSNR else { return "PSNR \(Int(psnr)) dB (size \(ourImage.width)x\(ourImage.height))" }
            return nil
        }
    }

    /// PSNR over the common area, RGB composited over white.
    static func psnr(_ a: AlcedoImage, _ b: AlcedoImage) -> Double {
        let width = min(a.width, b.width), height = min(a.height, b.height)
        let pa = a.frames[0].pixels, pb = b.frames[0].pixels
        var sum = 0.0
        for y in 0..<height {
            for x in 0..<width {
                let ia = (y * a.width + x) * 4, ib = (y * b.width + x) * 4
                for c in 0..<3 {
                    let va = Double(pa[ia + c]) * Double(pa[ia + 3]) / 255 + 255 - Double(pa[ia + 3])
                    let vb = Double(pb[ib + c]) * Double(pb[ib + 3]) / 255 + 255 - Double(pb[ib + 3])
                    sum += (va - vb) * (va - vb)
                }
            }
        }
        let mse = sum / Double(max(1, width * height * 3))
        return mse == 0 ? 99 : 10 * log10(255 * 255 / mse)
    }

    /// What differs for each of `paths`, two URLs at a time (thumbor and Alcedo work side by side).
    static func differences(_ paths: [String], peers: Peers) async throws -> [String] {
        var differences: [String] = []
        try await withThrowingTaskGroup(of: String?.self) { group in
            var pending = paths[...]
            func next() {
                guard let path = pending.popFirst() else { return }
                group.addTask { try await Self.compare(path, peers: peers).map { "/unsafe/\(path): \($0)" } }
            }
            for _ in 0..<2 { next() }
            while let result = try await group.next() {
                if let result { differences.append(result) }
                next()
            }
        }
        return differences
    }

    /// The mean and standard deviation of `noisy - plain` over R, G and B (the same size).
    static func noiseStatistics(plain: Data, noisy: Data) throws -> (mean: Double, deviation: Double) {
        let a = try ImageCodecRegistry.shared.decode(plain).frames[0].pixels, b = try ImageCodecRegistry.shared.decode(noisy).frames[0].pixels
        var sum = 0.0, squares = 0.0, count = 0.0
        for index in stride(from: 0, to: min(a.count, b.count), by: 4) {
            for c in 0..<3 {
                let d = Double(b[index + c]) - Double(a[index + c])
                sum += d
                squares += d * d
                count += 1
            }
        }
        let mean = sum / count
        return (mean, (squares / count - mean * mean).squareRoot())
    }

    @Test("noise without a seed: the same distribution as thumbor 7.8's (random, so statistics, not pixels)")
    func unseededNoise() async throws {
        let peers = try await Self.start()
        var statistics: [(mean: Double, deviation: Double)] = []
        for base in [peers.thumbor.baseURL, peers.alcedo.baseURL] {
            // PNG answers: no JPEG noise on top of the filter's.
            let plain = try await Self.get(base + "/unsafe/300x200/filters:format(png)/\(peers.originHost)/dusk.jpg")
            let noisy = try await Self.get(base + "/unsafe/300x200/filters:format(png):noise(30)/\(peers.originHost)/dusk.jpg")
            statistics.append(try Self.noiseStatistics(plain: plain.body, noisy: noisy.body))
        }
        await peers.stop()
        // Uniform in -15...14: mean -0.5, deviation √((30² - 1) / 12) ≈ 8.65, less where clamped.
        print("noise(30): thumbor mean \(statistics[0].mean) sd \(statistics[0].deviation), Alcedo mean \(statistics[1].mean) sd \(statistics[1].deviation)")
        #expect(abs(statistics[0].mean - statistics[1].mean) < 1)
        #expect(abs(statistics[0].deviation - statistics[1].deviation) < 0.8)
        #expect(statistics[1].deviation > 7 && statistics[1].deviation < 9)
    }

    @Test("AUTO_PNG_TO_JPG and a FILTERS that names autojpg: the same formats as thumbor 7.8, its autojpg() quirk included")
    func autoPNGToJPG() async throws {
        let peers = try await Self.start(settings: ["AUTO_PNG_TO_JPG = True",
                                                    "FILTERS = ['thumbor.filters.autojpg', 'thumbor.filters.quality']"],
                                         arguments: ["--thumbor-auto-png-to-jpg", "true", "--thumbor-filters", "autojpg,quality"])
        let paths = ["200x0/ORIGIN/opaque.png", "200x0/ORIGIN/badge.png", "200x0/filters:autojpg()/ORIGIN/opaque.png",
                     "200x0/filters:autojpg(false)/ORIGIN/opaque.png", "200x0/filters:quality(50)/ORIGIN/opaque.png"]
        let differences = try await Self.differences(paths, peers: peers)
        // The conversion happened at all (the formats compared are not both PNG by accident).
        let converted = try await Self.get(peers.alcedo.baseURL + "/unsafe/200x0/\(peers.originHost)/opaque.png")
        await peers.stop()
        #expect(ImageFormat.sniff(converted.body) == .jpeg)
        #expect(differences.isEmpty, Comment(rawValue: differences.joined(separator: "\n")))
    }

    /// PSNR between thumbor's answers to `first` and `second`.
    static func thumborPSNR(_ first: String, _ second: String, peers: Peers) async throws -> Double {
        let a = try await get(peers.thumbor.baseURL + "/unsafe/" + first.replacing("ORIGIN", with: peers.originHost))
        let b = try await get(peers.thumbor.baseURL + "/unsafe/" + second.replacing("ORIGIN", with: peers.originHost))
        return try await offPool { () throws -> Double in
            Self.psnr(try ImageCodecRegistry.shared.decode(a.body), try ImageCodecRegistry.shared.decode(b.body))
        }
    }

    @Test("filter order matters in thumbor 7.8: each pair's two answers differ by more than the bound its URLs are held to")
    func orderMatters() async throws {
        let peers = try await Self.start()
        var alike: [String] = []
        for (first, second) in Self.orderPairs {
            let psnr = try await Self.thumborPSNR(first, second, peers: peers)
            let bound = min(Self.strictPSNR[first] ?? Self.minimumPSNR, Self.strictPSNR[second] ?? Self.minimumPSNR)
            print("  order: \(first) vs its reverse: \(Int(psnr)) dB (bound \(Int(bound)) dB)")
            if psnr >= bound { alike.append("\(first): \(Int(psnr)) dB") }
        }
        await peers.stop()
        #expect(Self.orderPairs.count == 7)
        #expect(alike.isEmpty, Comment(rawValue: alike.joined(separator: "\n")))
    }

    @Test("the same answers as thumbor 7.8: statuses, formats, sizes, pixels, /meta JSON, signatures")
    func sameAnswers() async throws {
        let peers = try await Self.start()
        var differences = try await Self.differences(Self.paths, peers: peers)
        for (path, reason) in Self.knownDifferences {
            let difference = try await Self.compare(path, peers: peers)
            print("  known difference: /unsafe/\(path): \(difference ?? "equal this time") (\(reason))")
            if path.contains("convolution") { #expect(difference == "status 400, thumbor 500") }
        }
        for path in Self.metaPaths {
            let concrete = path.replacing("ORIGIN", with: peers.originHost)
            let theirs = try await Self.get(peers.thumbor.baseURL + "/unsafe/" + concrete)
            let ours = try await Self.get(peers.alcedo.baseURL + "/unsafe/" + concrete)
            let theirJSON = try JSONSerialization.jsonObject(with: theirs.body) as? NSDictionary
            let ourJSON = try? JSONSerialization.jsonObject(with: ours.body) as? NSDictionary
            if theirs.status != ours.status || theirJSON != ourJSON {
                differences.append("/unsafe/\(path): \(String(decoding: ours.body, as: UTF8.self)), thumbor \(String(decoding: theirs.body, as: UTF8.self))")
            }
        }
        // Signed URLs: Alcedo's signer signs what thumbor verifies; a wrong or missing signature is 400 on both.
        let signer = ThumborSigner(securityKey: peers.thumbor.securityKey)
        let signedPath = "300x200/smart/\(peers.originHost)/dusk.jpg"
        for url in [signer.signedPath(signedPath), "/" + String(repeating: "A", count: 27) + "=/" + signedPath, "/" + signedPath] {
            let theirs = try await Self.get(peers.thumbor.baseURL + url)
            let ours = try await Self.get(peers.alcedo.baseURL + url)
            if theirs.status != ours.status { differences.append("\(url): status \(ours.status), thumbor \(theirs.status)") }
        }
        let total = Self.paths.count + Self.metaPaths.count + 3
        print("thumbor differential: \(total - differences.count) of \(total) answers equal")
        for difference in differences { print("  differs: " + difference) }
        await peers.stop()
        #expect(differences.isEmpty, Comment(rawValue: "\(differences.count) of \(total) differ:\n" + differences.joined(separator: "\n")))
    }
}
