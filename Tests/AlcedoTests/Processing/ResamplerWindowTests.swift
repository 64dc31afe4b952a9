import Foundation
import Testing
@testable import Alcedo

/// A window of a resize (``Resampler/resize(_:width:height:to:window:)``,
/// ``AlcedoImage/resized(to:cropping:)``) is byte for byte the whole resize cut to the window,
/// on real pictures, with and without alpha, at every edge, through every path of the
/// resampler (box pre-shrink with partial blocks, blocks taller than 257 rows, Lanczos alone,
/// enlargement, one axis kept as it is).
@Suite("Resampler: a window of the result equals the whole result cut")
struct ResamplerWindowTests {
    typealias Rect = (x: Int, y: Int, size: PixelSize)

    /// The pictures: a photograph (227 x 149, odd sides), a PNG with graded alpha (256 x 256),
    /// the photograph with a translucent block at its top-left corner only (rows partly
    /// translucent: the windows away from it must still be made as those rows are), and a
    /// tall strip (31 x 1300) with a translucent band, for box blocks of more than 257 rows.
    static func picture(_ name: String) throws -> AlcedoImage {
        switch name {
        case "photo":
            return try ImageCodecRegistry.shared.decode(Fixtures.data("libjpeg-turbo/testorig.jpg"))
        case "alpha":
            return try ImageCodecRegistry.shared.decode(Fixtures.data("libpng/testpngs/rgb-alpha-8.png"))
        case "corner":
            let photo = try picture("photo")
            var pixels = photo.frames[0].pixels
            for y in 0..<12 {
                for x in 0..<9 { pixels[(y * photo.width + x) * 4 + 3] = UInt8(40 + 15 * x) }
            }
            return AlcedoImage(width: photo.width, height: photo.height, pixels: pixels)
        default:
            let pixels = ResamplerTests.pattern(width: 31, height: 1300) { x, y in
                RGBA(red: UInt8((x * 37 + y) & 255), green: UInt8((y * 7) & 255), blue: UInt8((x * y) & 255),
                     alpha: (600..<700).contains(y) && x > 20 ? 120 : 255)
            }
            return AlcedoImage(width: 31, height: 1300, pixels: pixels)
        }
    }

    /// `pixels` (`width` pixels a row) cut to `rect`.
    static func cut(_ pixels: [UInt8], width: Int, _ rect: Rect) -> [UInt8] {
        var result = [UInt8]()
        result.reserveCapacity(rect.size.width * rect.size.height * 4)
        for y in rect.y..<(rect.y + rect.size.height) {
            let start: Int = (y * width + rect.x) * 4
            let end: Int = start + rect.size.width * 4
            result += pixels[start..<end]
        }
        return result
    }

    /// Windows at each corner, in the middle of each edge and at the centre, one column, one
    /// row, a band across and a band down, and the whole result.
    static func windows(in target: PixelSize) -> [Rect] {
        let w = target.width, h = target.height
        let ww = max(1, w / 3), wh = max(1, h / 3)
        let rects: [Rect] = [
            (0, 0, PixelSize(width: ww, height: wh)), (w - ww, 0, PixelSize(width: ww, height: wh)),
            (0, h - wh, PixelSize(width: ww, height: wh)), (w - ww, h - wh, PixelSize(width: ww, height: wh)),
            ((w - ww) / 2, 0, PixelSize(width: ww, height: wh)), ((w - ww) / 2, h - wh, PixelSize(width: ww, height: wh)),
            (0, (h - wh) / 2, PixelSize(width: ww, height: wh)), (w - ww, (h - wh) / 2, PixelSize(width: ww, height: wh)),
            ((w - ww) / 2 + 1, (h - wh) / 2, PixelSize(width: ww, height: wh)),
            (w - 1, 0, PixelSize(width: 1, height: h)), (0, h / 2, PixelSize(width: w, height: 1)),
            (0, wh, PixelSize(width: w, height: wh)), (ww, 0, PixelSize(width: ww, height: h)),
            (0, 0, target),
        ]
        return rects.map { Resampler.clamped($0, in: target) }
    }

    static let targets = [
        PixelSize(width: 50, height: 31),    // box pre-shrink with partial blocks, then Lanczos
        PixelSize(width: 150, height: 101),  // Lanczos alone
        PixelSize(width: 481, height: 333),  // enlarged
        PixelSize(width: 37, height: 400),   // shrunk across, enlarged down
        PixelSize(width: 700, height: 9),    // an extreme fill's shape
        PixelSize(width: 31, height: 3),     // the strip's width kept: no horizontal filter
    ]

    @Test(arguments: ["photo", "alpha", "corner", "strip"], targets)
    func windowEqualsWholeCut(_ name: String, _ target: PixelSize) throws {
        let image = try Self.picture(name)
        let whole = image.resized(to: target)
        for window in Self.windows(in: target) {
            let expected = Self.cut(whole.frames[0].pixels, width: target.width, window)
            let made = image.resized(to: target, cropping: window)
            #expect(made.pixelSize == window.size)
            #expect(made.frames[0].pixels == expected, "\(name) to \(target), window \(window)")
            let bytes = image.frames[0].pixels.withUnsafeBufferPointer {
                Resampler.resize($0, width: image.width, height: image.height, to: target, window: window)
            }
            #expect(bytes == expected, "\(name) to \(target), window \(window) (Resampler)")
        }
    }

    @Test("a window is the same made in one band or in several")
    func bands() throws {
        let image = try Self.picture("corner")
        let target = PixelSize(width: 900, height: 640)
        let window: Rect = (311, 17, PixelSize(width: 200, height: 600))
        let plan = ResamplerPlan(from: image.pixelSize, to: target, window: window)
        #expect(plan.output == window.size)
        let pixels = image.frames[0].pixels
        let serial = pixels.withUnsafeBufferPointer { plan.resize($0, concurrency: .serial) }
        let banded = pixels.withUnsafeBufferPointer { plan.resize($0, concurrency: .bands(5)) }
        #expect(serial == banded)
        #expect(serial == Self.cut(image.resized(to: target).frames[0].pixels, width: target.width, window))
    }

    @Test("chosen columns and rows are the whole result's pixels at their crossings")
    func grid() throws {
        let image = try Self.picture("alpha")
        for target in [PixelSize(width: 97, height: 61), PixelSize(width: 700, height: 520)] {
            let whole = image.resized(to: target).frames[0].pixels
            let columns = [0, 3, 4, 5, 40, 41, target.width / 2, target.width - 2, target.width - 1]
            let rows = [1, 2, 9, 30, target.height - 1]
            var expected = [UInt8]()
            for y in rows {
                for x in columns {
                    let at: Int = (y * target.width + x) * 4
                    expected += whole[at..<(at + 4)]
                }
            }
            // Given out of order, repeated and past the edges: sorted, kept once, dropped.
            let given: [Int] = Array(columns.reversed()) + [-1, 3, target.width]
            let made = image.frames[0].pixels.withUnsafeBufferPointer {
                Resampler.resize($0, width: image.width, height: image.height, to: target, columns: given, rows: rows + [target.height])
            }
            #expect(made == expected, "\(target)")
        }
    }

    @Test("every frame is made and the window only is held")
    func frames() throws {
        let photo = try Self.picture("photo")
        let inverted = photo.frames[0].pixels.enumerated().map { $0.offset % 4 == 3 ? $0.element : 255 - $0.element }
        let second = AlcedoImage.Frame(pixels: inverted, duration: 0.2)
        let image = AlcedoImage(width: photo.width, height: photo.height,
                                frames: [AlcedoImage.Frame(pixels: photo.frames[0].pixels, duration: 0.1), second], loopCount: 2)
        let target = PixelSize(width: 1135, height: 745), window: Rect = (1000, 600, PixelSize(width: 135, height: 145))
        let made = image.resized(to: target, cropping: window)
        let whole = image.resized(to: target)
        #expect(made.frames.count == 2 && made.loopCount == 2 && made.frames.map(\.duration) == [0.1, 0.2])
        for index in 0..<2 {
            #expect(made.frames[index].pixels == Self.cut(whole.frames[index].pixels, width: target.width, window))
        }
    }

    @Test("windows past the result are moved and cut into it; the same size crops the pixels")
    func clampingAndSameSize() throws {
        let image = try Self.picture("alpha")
        let target = PixelSize(width: 120, height: 80)
        let whole = image.resized(to: target).frames[0].pixels
        let past = image.resized(to: target, cropping: (100, -5, PixelSize(width: 50, height: 30)))
        #expect(past.pixelSize == PixelSize(width: 20, height: 30))
        #expect(past.frames[0].pixels == Self.cut(whole, width: 120, (100, 0, PixelSize(width: 20, height: 30))))
        let same = image.resized(to: image.pixelSize, cropping: (10, 20, PixelSize(width: 30, height: 40)))
        #expect(same.frames[0].pixels == Self.cut(image.frames[0].pixels, width: image.width, (10, 20, PixelSize(width: 30, height: 40))))
    }

    /// The resampler's weights and rows follow the window: a 100 x 20000 window of a
    /// 26667 x 20000 result needs under 1 MiB besides its pixels, a quarter of the whole's at most.
    @Test func workingMemoryFollowsTheWindow() {
        let source = PixelSize(width: 2000, height: 1500)
        let scaled = PixelSize(width: 26667, height: 20000), window = PixelSize(width: 100, height: 20000)
        let windowed = Resampler.workingMemory(from: source, to: scaled, window: window)
        #expect(windowed < 1 << 20)
        #expect(windowed * 4 < Resampler.workingMemory(from: source, to: scaled))
    }

    /// Content-aware cropping reads a few pixels of each of its blocks: made alone from the
    /// source, they give the place the whole resized image gives.
    @Test(arguments: [PixelSize(width: 900, height: 590), PixelSize(width: 1700, height: 1115), PixelSize(width: 2270, height: 300)])
    func smartCropOnSamples(_ target: PixelSize) throws {
        let image = try Self.picture("photo")
        let whole = image.resized(to: target)
        for crop in [PixelSize(width: 200, height: target.height), PixelSize(width: target.width, height: 90), PixelSize(width: 150, height: 150)] {
            let expected = SmartCrop.origin(of: crop, in: whole)
            let pixels = image.frames[0].pixels
            let chosen = SmartCrop.origin(of: crop, inImageOf: target) { rows, columns in
                pixels.withUnsafeBufferPointer {
                    Resampler.resize($0, width: image.width, height: image.height, to: target, columns: columns, rows: rows)
                }
            }
            #expect(chosen.x == expected.x && chosen.y == expected.y, "\(target) crop \(crop): \(chosen) against \(expected)")
        }
    }

    /// `ResizingImageProcessor(.aspectFill) |> CroppingImageProcessor` makes only the crop: the
    /// same pixels as the two run one after the other, and an extreme fill that the resize
    /// alone refuses (its whole result is over the pixel limit) is made.
    @Test func resizeThenCropMakesOnlyTheCrop() throws {
        let image = try Self.picture("corner")
        for anchor in [CroppingImageProcessor.Anchor.center, .topLeft, .bottomRight, .init(x: 0.3, y: 0.8)] {
            let resizing = ResizingImageProcessor(referenceSize: PixelSize(width: 90, height: 90), mode: .aspectFill)
            let cropping = CroppingImageProcessor(size: PixelSize(width: 90, height: 90), anchor: anchor)
            let chained = try (resizing |> cropping).process(image)
            let stepwise = try cropping.process(resizing.process(image))
            #expect(chained.pixelSize == PixelSize(width: 90, height: 90))
            #expect(chained.frames[0].pixels == stepwise.frames[0].pixels, "anchor \(anchor)")
        }
        let line = AlcedoImage(width: 4000, height: 1, pixels: ResamplerTests.pattern(width: 4000, height: 1) { x, _ in
            RGBA(red: UInt8(x & 255), green: UInt8((x >> 4) & 255), blue: 9)
        })
        let resizing = ResizingImageProcessor(referenceSize: PixelSize(width: 300, height: 300), mode: .aspectFill)
        let chain = resizing |> CroppingImageProcessor(size: PixelSize(width: 300, height: 300))
        var refused = false
        do { _ = try resizing.process(line) } catch { refused = true }
        #expect(refused, "the whole 1,200,000 x 300 result is over the pixel limit")
        let filled = try chain.process(line)
        #expect(filled.pixelSize == PixelSize(width: 300, height: 300))
        #expect(chain.intermediateBytes(for: line.pixelSize) < 8 << 20)
    }
}
