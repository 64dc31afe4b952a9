import AlcedoTestSupport
import Foundation
import Testing
@testable import Alcedo

/// Writes GIF bytes by hand, record by record, with no GIF library: the LZW data uses 8-bit
/// codes with a clear code every 254 pixels, so every code is a literal 9 bits wide.
struct GIFTestFile {
    private(set) var bytes: [UInt8] = []

    /// The header and logical screen descriptor, with a global colour table when `palette` is given.
    init(width: Int, height: Int, palette: [[UInt8]]? = nil, version: String = "GIF89a") {
        bytes = Array(version.utf8) + GIFTestFile.word(width) + GIFTestFile.word(height)
        if let palette {
            let bits = GIFTestFile.tableBits(palette.count)
            bytes += [0x80 | 0x70 | UInt8(bits - 1), 0, 0] + GIFTestFile.table(palette, bits: bits)
        } else {
            bytes += [0x70, 0, 0]
        }
    }

    /// A `NETSCAPE2.0` extension with loop count `loops`.
    mutating func loop(_ loops: Int, identifier: String = "NETSCAPE2.0") {
        bytes += [0x21, 0xFF, 11] + Array(identifier.utf8) + [3, 1] + GIFTestFile.word(loops) + [0]
    }

    /// A graphic control extension.
    mutating func control(disposal: Int = 0, delay: Int = 0, transparent: Int? = nil) {
        bytes += [0x21, 0xF9, 4, UInt8(disposal << 2) | (transparent == nil ? 0 : 1)] + GIFTestFile.word(delay)
            + [UInt8(transparent ?? 0), 0]
    }

    /// An image: `indices` row by row, top to bottom (stored in interlaced order when asked).
    /// `pixelCount` codes are written (default: all), then the end code.
    mutating func image(x: Int = 0, y: Int = 0, width: Int, height: Int, palette: [[UInt8]]? = nil,
                        interlaced: Bool = false, indices: [UInt8], pixelCount: Int? = nil) {
        var flags: UInt8 = interlaced ? 0x40 : 0
        var table: [UInt8] = []
        if let palette {
            let bits = GIFTestFile.tableBits(palette.count)
            flags |= 0x80 | UInt8(bits - 1)
            table = GIFTestFile.table(palette, bits: bits)
        }
        bytes += [0x2C] + GIFTestFile.word(x) + GIFTestFile.word(y) + GIFTestFile.word(width) + GIFTestFile.word(height) + [flags] + table
        var stored = indices
        if interlaced {
            let order = [(0, 8), (4, 8), (2, 4), (1, 2)].flatMap { Array(stride(from: $0.0, to: height, by: $0.1)) }
            stored = order.flatMap { indices[($0 * width)..<(($0 + 1) * width)] }
        }
        bytes += [8] + GIFTestFile.subBlocks(GIFTestFile.lzw(Array(stored.prefix(pixelCount ?? stored.count))))
    }

    mutating func trailer() { bytes += [0x3B] }

    mutating func append(_ raw: [UInt8]) { bytes += raw }

    var data: Data { Data(bytes) }

    static func word(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF)] }

    private static func tableBits(_ count: Int) -> Int {
        var bits = 1
        while 1 << bits < count { bits += 1 }
        return bits
    }

    private static func table(_ palette: [[UInt8]], bits: Int) -> [UInt8] {
        palette.flatMap { $0 } + [UInt8](repeating: 0, count: ((1 << bits) - palette.count) * 3)
    }

    /// 9-bit codes, least significant bit first: clear, up to 254 literals, clear, …, end.
    static func lzw(_ indices: [UInt8]) -> [UInt8] {
        var codes: [Int] = []
        for (offset, index) in indices.enumerated() {
            if offset % 254 == 0 { codes.append(256) }
            codes.append(Int(index))
        }
        if codes.isEmpty { codes.append(256) }
        codes.append(257)
        var out: [UInt8] = []
        var buffer = 0, bits = 0
        for code in codes {
            buffer |= code << bits
            bits += 9
            while bits >= 8 { out.append(UInt8(buffer & 0xFF)); buffer >>= 8; bits -= 8 }
        }
        if bits > 0 { out.append(UInt8(buffer & 0xFF)) }
        return out
    }

    static func subBlocks(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var offset = 0
        while offset < data.count {
            let count = min(255, data.count - offset)
            out += [UInt8(count)] + data[offset..<(offset + count)]
            offset += count
        }
        return out + [0]
    }
}

/// Colours for hand-made GIFs.
private let red: [UInt8] = [255, 0, 0], green: [UInt8] = [0, 255, 0], blue: [UInt8] = [0, 0, 255]
private let white: [UInt8] = [255, 255, 255], black: [UInt8] = [0, 0, 0], yellow: [UInt8] = [255, 255, 0]
private let palette4 = [red, green, blue, white]  // indices 0 red, 1 green, 2 blue, 3 white

private extension RGBA {
    init(_ rgb: [UInt8]) { self.init(red: rgb[0], green: rgb[1], blue: rgb[2]) }
}

/// The pixels of a frame as a grid of characters, for exact comparisons that read well:
/// R G B W K Y for the opaque colours, `.` for transparent, `?` for anything else.
private func picture(_ image: AlcedoImage, frame: Int) -> [String] {
    let names: [RGBA: Character] = [RGBA(red): "R", RGBA(green): "G", RGBA(blue): "B", RGBA(white): "W",
                                    RGBA(black): "K", RGBA(yellow): "Y", .clear: "."]
    return (0..<image.height).map { y in
        String((0..<image.width).map { x in names[image.pixel(x: x, y: y, frame: frame)] ?? "?" })
    }
}

@Suite("GIF decoder")
struct GIFDecoderTests {
    let decoder = GIFDecoder()

    @Test func keepDisposalDrawsOverThePreviousFrame() throws {
        var gif = GIFTestFile(width: 4, height: 3, palette: palette4)
        gif.control(disposal: 1, delay: 10)
        gif.image(width: 4, height: 3, indices: [UInt8](repeating: 0, count: 12))
        gif.control(disposal: 0, delay: 10, transparent: 3)
        gif.image(x: 1, y: 1, width: 2, height: 2, indices: [2, 3, 3, 1])
        gif.trailer()
        let image = try decoder.decode(gif.data, options: .default)
        #expect(picture(image, frame: 0) == ["RRRR", "RRRR", "RRRR"])
        #expect(picture(image, frame: 1) == ["RRRR", "RBRR", "RRGR"])
    }

    @Test func backgroundDisposalClearsTheFrameArea() throws {
        var gif = GIFTestFile(width: 4, height: 3, palette: palette4)
        gif.control(disposal: 1)
        gif.image(width: 4, height: 3, indices: [UInt8](repeating: 1, count: 12))
        gif.control(disposal: 2)
        gif.image(x: 1, y: 0, width: 2, height: 2, indices: [2, 2, 2, 2])
        gif.control(disposal: 0)
        gif.image(x: 3, y: 2, width: 1, height: 1, indices: [3])
        gif.trailer()
        let image = try decoder.decode(gif.data, options: .default)
        #expect(picture(image, frame: 1) == ["GBBG", "GBBG", "GGGG"])
        #expect(picture(image, frame: 2) == ["G..G", "G..G", "GGGW"])
        #expect(image.hasAlpha)
    }

    @Test func previousDisposalRestoresTheCanvas() throws {
        var gif = GIFTestFile(width: 4, height: 2, palette: palette4)
        gif.control(disposal: 1)
        gif.image(width: 4, height: 2, indices: [0, 0, 0, 0, 1, 1, 1, 1])
        gif.control(disposal: 3)
        gif.image(x: 0, y: 0, width: 3, height: 2, indices: [2, 2, 2, 2, 2, 2])
        gif.control(disposal: 3)
        gif.image(x: 3, y: 1, width: 1, height: 1, indices: [3])
        gif.control(disposal: 0)
        gif.image(x: 2, y: 0, width: 1, height: 1, indices: [3])
        gif.trailer()
        let image = try decoder.decode(gif.data, options: .default)
        #expect(picture(image, frame: 1) == ["BBBR", "BBBG"])
        #expect(picture(image, frame: 2) == ["RRRR", "GGGW"])
        #expect(picture(image, frame: 3) == ["RRWR", "GGGG"])
    }

    /// Restoring to "previous" on the first frame gives back the transparent canvas.
    @Test func previousDisposalOfTheFirstFrameIsTransparent() throws {
        var gif = GIFTestFile(width: 2, height: 1, palette: palette4)
        gif.control(disposal: 3)
        gif.image(width: 2, height: 1, indices: [0, 0])
        gif.control(disposal: 0, transparent: 0)
        gif.image(width: 2, height: 1, indices: [0, 1])
        gif.trailer()
        let image = try decoder.decode(gif.data, options: .default)
        #expect(picture(image, frame: 1) == [".G"])
    }

    /// Random frames with every disposal method, overlapping or not, against a compositor
    /// written from the specification that saves the whole canvas before each frame: the
    /// decoder restores "previous" from the frames it keeps and must show the same pixels.
    @Test func disposalSequencesMatchASpecificationCompositor() throws {
        var random = SeededRandom(seed: 0x61F)
        let width = 7, height = 5
        for _ in 0..<300 {
            var gif = GIFTestFile(width: width, height: height, palette: palette4)
            var expected: [[UInt8]] = []
            var canvas = [UInt8](repeating: 0, count: width * height * 4)
            var pending: (x: Int, y: Int, w: Int, h: Int, disposal: Int, saved: [UInt8])?
            for _ in 0..<Int.random(in: 2...6, using: &random) {
                let w = Int.random(in: 1...width, using: &random), h = Int.random(in: 1...height, using: &random)
                let x = Int.random(in: 0...(width - w), using: &random), y = Int.random(in: 0...(height - h), using: &random)
                let disposal = Int.random(in: 0...3, using: &random)
                let transparent: Int? = Bool.random(using: &random) ? 3 : nil
                let indices = (0..<(w * h)).map { _ in UInt8.random(in: 0...3, using: &random) }
                gif.control(disposal: disposal, transparent: transparent)
                gif.image(x: x, y: y, width: w, height: h, indices: indices)
                // The specification: dispose the previous frame, save, draw.
                if let previous = pending {
                    for row in previous.y..<(previous.y + previous.h) {
                        for column in previous.x..<(previous.x + previous.w) {
                            let at = (row * width + column) * 4
                            for channel in 0..<4 {
                                if previous.disposal == 2 { canvas[at + channel] = 0 }
                                if previous.disposal == 3 { canvas[at + channel] = previous.saved[at + channel] }
                            }
                        }
                    }
                }
                pending = (x, y, w, h, disposal, canvas)
                for (offset, index) in indices.enumerated() where Int(index) != transparent {
                    let at = ((y + offset / w) * width + x + offset % w) * 4
                    canvas[at..<(at + 4)] = ArraySlice(palette4[Int(index)] + [255])
                }
                expected.append(canvas)
            }
            gif.trailer()
            let image = try decoder.decode(gif.data, options: .default)
            #expect(image.frames.map(\.pixels) == expected)
        }
    }

    /// An animation decoded for a target size keeps each composited frame box-shrunk: every
    /// frame equals the full-size frame shrunk by the same factor, "previous" disposal included
    /// (restored from a copy, as the full-size frames are not kept).
    @Test func animationsForATargetSizeKeepShrunkFrames() throws {
        var random = SeededRandom(seed: 0x5A1)
        let width = 64, height = 40
        var gif = GIFTestFile(width: width, height: height, palette: palette4)
        for disposal in [1, 3, 2, 3, 0] {
            let w = Int.random(in: 8...width, using: &random), h = Int.random(in: 8...height, using: &random)
            let x = Int.random(in: 0...(width - w), using: &random), y = Int.random(in: 0...(height - h), using: &random)
            gif.control(disposal: disposal, delay: 10, transparent: 3)
            gif.image(x: x, y: y, width: w, height: h, indices: (0..<(w * h)).map { _ in UInt8.random(in: 0...3, using: &random) })
        }
        gif.trailer()
        let full = try decoder.decode(gif.data)
        let options = DecodingOptions(targetSize: PixelSize(width: 16, height: 16))
        let factor = options.boxShrinkFactor(width: width, height: height)
        #expect(factor == 2)
        let shrunk = try decoder.decode(gif.data, options: options)
        #expect(shrunk.width == 32 && shrunk.height == 20 && shrunk.frames.count == 5)
        #expect(shrunk.frames.map(\.duration) == full.frames.map(\.duration))
        for index in 0..<5 {
            let expected = full.frames[index].pixels.withUnsafeBufferPointer { pixels -> [UInt8] in
                let shrinker = BoxShrinker(width: width, height: height, factor: factor)
                defer { shrinker.deallocate() }
                for row in 0..<height { shrinker.add(row: pixels.baseAddress! + row * width * 4, y: row) }
                return [UInt8](unsafeUninitializedCapacity: 32 * 20 * 4) { out, count in
                    shrinker.finish(into: out.baseAddress!)
                    count = out.count
                }
            }
            #expect(shrunk.frames[index].pixels == expected, "frame \(index + 1)")
        }
    }

    /// Only a "restore to previous" frame right after another one copies its area: the others
    /// restore from the frames kept, so an 8000x8000 two-frame "previous" GIF costs its two
    /// frames and no third canvas.
    @Test func restoringToPreviousCopiesOnlyAfterAnotherRestore() {
        var compositor = GIFCompositor(width: 10, height: 10)
        let area = GIFCompositor.Area(x: 0, y: 0, width: 10, height: 10)
        #expect(compositor.restoreCopyBytes(area: area, disposal: 3) == 0, "before the first frame the canvas is clear")
        compositor.beginFrame(area: area, disposal: 1)
        #expect(compositor.restoreCopyBytes(area: area, disposal: 3) == 0, "the previous frame is kept")
        compositor.beginFrame(area: area, disposal: 3)
        #expect(compositor.restoreCopyBytes(area: area, disposal: 3) == 400)
        #expect(compositor.restoreCopyBytes(area: area, disposal: 3, isLast: true) == 0, "the last frame is never disposed")
        #expect(compositor.restoreCopyBytes(area: area, disposal: 2) == 0)
        // Outputs not kept (shrunk frames): every restore after the first copies.
        var unkept = GIFCompositor(width: 10, height: 10, keepsOutputs: false)
        unkept.beginFrame(area: area, disposal: 1)
        #expect(unkept.restoreCopyBytes(area: area, disposal: 3) == 400)
    }

    @Test func localColourTablesAndOffsets() throws {
        var gif = GIFTestFile(width: 3, height: 3, palette: palette4)
        gif.image(width: 3, height: 3, indices: [3, 3, 3, 3, 3, 3, 3, 3, 3])
        gif.image(x: 1, y: 1, width: 2, height: 2, palette: [yellow, black], indices: [0, 1, 1, 0])
        gif.image(x: 0, y: 2, width: 1, height: 1, indices: [0])
        gif.trailer()
        let image = try decoder.decode(gif.data, options: .default)
        #expect(picture(image, frame: 1) == ["WWW", "WYK", "WKY"])
        #expect(picture(image, frame: 2) == ["WWW", "WYK", "RKY"])
    }

    @Test func framesAreClippedToTheCanvas() throws {
        var gif = GIFTestFile(width: 3, height: 2, palette: palette4)
        gif.image(x: 2, y: 1, width: 3, height: 3, indices: [0, 1, 2, 1, 1, 1, 2, 2, 2])
        gif.image(x: 7, y: 9, width: 2, height: 2, indices: [3, 3, 3, 3])
        gif.image(x: 1, y: 0, width: 1, height: 1, indices: [2])
        gif.trailer()
        let image = try decoder.decode(gif.data, options: .default)
        #expect(image.frames.count == 3)
        #expect(picture(image, frame: 0) == ["...", "..R"])
        #expect(picture(image, frame: 1) == ["...", "..R"])
        #expect(picture(image, frame: 2) == [".B.", "..R"])
        let info = try decoder.info(for: gif.data, options: .default)
        #expect(info.frameCount == 3 && info.hasAlpha)
    }

    /// Rows below the canvas are skipped undecoded, for interlaced frames too; the next frame
    /// still reads from the right place.
    @Test func rowsBelowTheCanvasAreSkipped() throws {
        for interlaced in [false, true] {
            var gif = GIFTestFile(width: 3, height: 2, palette: palette4)
            gif.image(width: 3, height: 10, interlaced: interlaced, indices: (0..<30).map { UInt8($0 / 3 % 4) })
            gif.image(x: 1, y: 1, width: 1, height: 1, indices: [3])
            gif.trailer()
            let image = try decoder.decode(gif.data, options: .default)
            #expect(picture(image, frame: 0) == ["RRR", "GGG"], "interlaced: \(interlaced)")
            #expect(picture(image, frame: 1) == ["RRR", "GWG"], "interlaced: \(interlaced)")
        }
    }

    /// Frames much wider than the canvas cost their full width to decode: they count against
    /// the byte limit even though the canvas is small.
    @Test func decodingWorkIsBounded() throws {
        var gif = GIFTestFile(width: 1, height: 1, palette: palette4)
        for _ in 0..<3 { gif.image(width: 1000, height: 1, indices: [UInt8](repeating: 1, count: 1000)) }
        gif.trailer()
        let options = DecodingOptions(limits: DecodingLimits(maxTotalBytes: 10_000))
        #expect(pngGIFDecodingFailure { _ = try decoder.decode(gif.data, options: options) }
            == .animationTooLarge(format: .gif, bytes: 12_000, limit: 10_000))
        #expect(try decoder.decode(gif.data, options: .default).frames.count == 3)
    }

    @Test func interlacedRowsLandInPlace() throws {
        let rows = 11
        let indices: [UInt8] = (0..<rows).flatMap { row -> [UInt8] in [UInt8(row % 4), 3] }
        var plain = GIFTestFile(width: 2, height: rows, palette: palette4)
        plain.image(width: 2, height: rows, indices: indices)
        plain.trailer()
        var interlaced = GIFTestFile(width: 2, height: rows, palette: palette4)
        interlaced.image(width: 2, height: rows, interlaced: true, indices: indices)
        interlaced.trailer()
        let a = try decoder.decode(plain.data, options: .default)
        let b = try decoder.decode(interlaced.data, options: .default)
        #expect(picture(a, frame: 0) == picture(b, frame: 0))
        #expect(picture(a, frame: 0)[5] == "GW")
        #expect(interlaced.bytes != plain.bytes)
    }

    @Test func delaysAreNormalised() throws {
        var gif = GIFTestFile(width: 1, height: 1, palette: palette4)
        for delay in [0, 1, 5, 50] {
            gif.control(delay: delay)
            gif.image(width: 1, height: 1, indices: [0])
        }
        gif.image(width: 1, height: 1, indices: [1])  // no graphic control extension
        gif.trailer()
        let expected = [0.1, 0.1, 0.05, 0.5, 0.1]
        #expect(try decoder.decode(gif.data, options: .default).frames.map(\.duration) == expected)
        #expect(try decoder.info(for: gif.data, options: .default).frameDurations == expected)
        #expect(try decoder.info(for: gif.data, options: .default).totalDuration == expected.reduce(0, +))
    }

    /// `loopCount` counts plays: no extension plays once, 0 loops forever, N repeats N times.
    @Test(arguments: [(nil, 1), (0, 0), (1, 2), (3, 4), (65_535, 65_536)] as [(Int?, Int)])
    func loopCountIsTheNumberOfPlays(netscape: Int?, plays: Int) throws {
        var gif = GIFTestFile(width: 1, height: 1, palette: palette4)
        if let netscape { gif.loop(netscape) }
        gif.image(width: 1, height: 1, indices: [0])
        gif.image(width: 1, height: 1, indices: [1])
        gif.trailer()
        #expect(try decoder.decode(gif.data, options: .default).loopCount == plays)
        #expect(try decoder.info(for: gif.data, options: .default).loopCount == plays)
    }

    @Test func animExtsIdentifierAlsoCarriesTheLoopCount() throws {
        var gif = GIFTestFile(width: 1, height: 1, palette: palette4)
        gif.loop(2, identifier: "ANIMEXTS1.0")
        gif.image(width: 1, height: 1, indices: [0])
        gif.image(width: 1, height: 1, indices: [1])
        gif.trailer()
        #expect(try decoder.decode(gif.data, options: .default).loopCount == 3)
    }

    @Test func singleFrameIsAStill() throws {
        var gif = GIFTestFile(width: 1, height: 1, palette: palette4)
        gif.loop(0)
        gif.control(delay: 70)
        gif.image(width: 1, height: 1, indices: [0])
        gif.trailer()
        let image = try decoder.decode(gif.data, options: .default)
        #expect(image.loopCount == 0 && image.frames[0].duration == 0 && !image.isAnimated)
        let info = try decoder.info(for: gif.data, options: .default)
        #expect(info.frameCount == 1 && info.frameDurations == [0] && info.loopCount == 0 && !info.hasAlpha)
    }

    @Test func firstFrameOnlyStopsAfterTheFirstFrame() throws {
        var gif = GIFTestFile(width: 2, height: 1, palette: palette4)
        gif.loop(0)
        gif.control(delay: 20)
        gif.image(width: 2, height: 1, indices: [0, 1])
        gif.append([0x2C, 0xFF])  // a cut image descriptor that the first-frame decode never reaches
        let image = try decoder.decode(gif.data, options: DecodingOptions(firstFrameOnly: true))
        #expect(picture(image, frame: 0) == ["RG"])
        #expect(image.frames.count == 1 && image.loopCount == 0)
        #expect(pngGIFDecodingFailure { _ = try decoder.decode(gif.data, options: .default) }?.pngGIFKind == "truncated")
    }

    @Test func missingColourTableIsAGreyRampAndIndicesPastTheTableAreBlack() throws {
        var noTable = GIFTestFile(width: 3, height: 1)
        noTable.image(width: 3, height: 1, indices: [0, 128, 255])
        noTable.trailer()
        let grey = try decoder.decode(noTable.data, options: .default)
        #expect(grey.pixel(x: 1, y: 0) == RGBA(red: 128, green: 128, blue: 128))
        #expect(grey.pixel(x: 2, y: 0) == .white)

        var shortTable = GIFTestFile(width: 2, height: 1, palette: [red, green])
        shortTable.image(width: 2, height: 1, indices: [1, 200])
        shortTable.trailer()
        #expect(picture(try decoder.decode(shortTable.data, options: .default), frame: 0) == ["GK"])
    }

    /// A frame whose LZW data ends early keeps the rows it has; the next frame still decodes.
    @Test func shortFrameKeepsItsRows() throws {
        var gif = GIFTestFile(width: 3, height: 3, palette: palette4)
        gif.control(disposal: 1)
        gif.image(width: 3, height: 3, indices: [UInt8](repeating: 3, count: 9))
        gif.image(width: 3, height: 3, indices: [0, 0, 0, 1, 1, 1, 2, 2, 2], pixelCount: 4)
        gif.image(x: 2, y: 2, width: 1, height: 1, indices: [0])
        gif.trailer()
        let image = try decoder.decode(gif.data, options: .default)
        #expect(picture(image, frame: 1) == ["RRR", "WWW", "WWW"])
        #expect(picture(image, frame: 2) == ["RRR", "WWW", "WWR"])
    }

    @Test func missingTrailerIsComplete() throws {
        var gif = GIFTestFile(width: 1, height: 1, palette: palette4)
        gif.image(width: 1, height: 1, indices: [2])
        #expect(picture(try decoder.decode(gif.data, options: .default), frame: 0) == ["B"])
    }

    /// Bytes that start no record end the file after a complete frame; before any frame they
    /// are an error. Zero bytes where a record starts (empty block terminators) are skipped.
    @Test func unknownDataAfterTheLastFrameEndsTheFile() throws {
        var gif = GIFTestFile(width: 1, height: 1, palette: palette4)
        gif.control(delay: 30)
        gif.image(width: 1, height: 1, indices: [0])
        gif.control(delay: 40)
        gif.image(width: 1, height: 1, indices: [1])
        gif.append([0x00, 0x13, 0x37])
        let image = try decoder.decode(gif.data, options: .default)
        #expect(image.frames.count == 2 && image.frames.map(\.duration) == [0.3, 0.4])
        #expect(try decoder.info(for: gif.data, options: .default).frameCount == 2)

        var junkFirst = GIFTestFile(width: 1, height: 1, palette: palette4)
        junkFirst.append([0x13])
        junkFirst.image(width: 1, height: 1, indices: [0])
        junkFirst.trailer()
        #expect(pngGIFDecodingFailure { _ = try decoder.decode(junkFirst.data, options: .default) }?.pngGIFKind == "corrupt")
    }

    /// A zero byte before the first record (as thumbor 7.8 writes a trimmed animation, after the
    /// global colour table) or between two frames is an empty block terminator: skipped, as
    /// Pillow and ImageMagick skip it, so every frame is read.
    @Test func zeroBytesBetweenRecordsAreSkipped() throws {
        var gif = GIFTestFile(width: 1, height: 1, palette: palette4)
        gif.append([0x00, 0x00])
        gif.control(delay: 30)
        gif.image(width: 1, height: 1, indices: [0])
        gif.append([0x00])
        gif.control(delay: 40)
        gif.image(width: 1, height: 1, indices: [1])
        gif.append([0x00])
        gif.trailer()
        let image = try decoder.decode(gif.data, options: .default)
        #expect(image.frames.count == 2 && image.frames.map(\.duration) == [0.3, 0.4])
        #expect(picture(image, frame: 0) == ["R"] && picture(image, frame: 1) == ["G"])
        #expect(try decoder.info(for: gif.data, options: .default).frameCount == 2)
    }

    @Test func fileWithoutImagesIsCorrupt() {
        var gif = GIFTestFile(width: 1, height: 1, palette: palette4)
        gif.trailer()
        #expect(pngGIFDecodingFailure { _ = try decoder.decode(gif.data, options: .default) }?.pngGIFKind == "corrupt")
        #expect(pngGIFDecodingFailure { _ = try decoder.info(for: gif.data, options: .default) }?.pngGIFKind == "corrupt")
    }

    // MARK: - Hostile input

    @Test func emptyAndTinyInputs() {
        #expect(pngGIFDecodingFailure { _ = try decoder.decode(Data(), options: .default) } == .emptyData)
        #expect(pngGIFDecodingFailure { _ = try decoder.info(for: Data(), options: .default) } == .emptyData)
        for bytes in [[0x47], [0x47, 0x49], [0x47, 0x49, 0x46], [0x00, 0x01, 0x02]] as [[UInt8]] {
            #expect(pngGIFDecodingFailure { _ = try decoder.decode(Data(bytes), options: .default) } != nil)
        }
        #expect(pngGIFDecodingFailure { _ = try decoder.decode(Data("GIF89a".utf8), options: .default) }?.pngGIFKind == "truncated")
        #expect(pngGIFDecodingFailure { _ = try decoder.decode(Data("PNG89a1234567".utf8), options: .default) }?.pngGIFKind == "header")
    }

    /// Every prefix of a one-frame file fails, up to the one that lacks only the trailer.
    @Test func everyPrefixOfAStillFails() throws {
        let bytes = try [UInt8](Fixtures.data("giflib/pic/x-trans.gif"))
        let full = try decoder.decode(Data(bytes), options: .default)
        for length in 0..<(bytes.count - 1) {
            let failure = pngGIFDecodingFailure { _ = try decoder.decode(Data(bytes[0..<length]), options: .default) }
            #expect(failure != nil, "prefix of \(length) bytes decoded")
            _ = try? decoder.info(for: Data(bytes[0..<length]), options: .default)
        }
        let same = try decoder.decode(Data(bytes.dropLast()), options: .default).pixels == full.pixels
        #expect(same)
    }

    /// An animation cut in the middle: an error by default; with `allowTruncated`, the frames
    /// completed before the cut.
    @Test func truncatedAnimation() throws {
        var gif = GIFTestFile(width: 2, height: 2, palette: palette4)
        gif.loop(0)
        gif.control(delay: 10)
        gif.image(width: 2, height: 2, indices: [0, 0, 0, 0])
        let afterFirstFrame = gif.bytes.count
        gif.control(delay: 10)
        gif.image(width: 2, height: 2, indices: [1, 1, 1, 1])
        let complete = gif.bytes.count
        gif.control(delay: 10)
        gif.image(width: 2, height: 2, indices: [2, 2, 2, 2])
        gif.trailer()
        let bytes = gif.bytes
        let allowing = DecodingOptions(allowTruncated: true)
        var partial = 0
        for length in (complete + 1)..<(bytes.count - 1) {
            let cut = Data(bytes[0..<length])
            #expect(pngGIFDecodingFailure { _ = try decoder.decode(cut, options: .default) }?.pngGIFKind == "truncated", "cut at \(length)")
            let image = try decoder.decode(cut, options: allowing)
            #expect(image.frames.count == 2, "cut at \(length)")
            #expect(image.loopCount == 0)
            partial += 1
        }
        #expect(partial > 10)
        // Cut inside the first frame: an error even when truncation is allowed.
        let early = Data(bytes[0..<(afterFirstFrame - 3)])
        #expect(pngGIFDecodingFailure { _ = try decoder.decode(early, options: allowing) }?.pngGIFKind == "truncated")
        // Cut between two frames: complete (many files lack the trailer).
        #expect(try decoder.decode(Data(bytes[0..<complete]), options: .default).frames.count == 2)
    }

    @Test func hugeCanvasIsRefusedBeforeAllocating() throws {
        var gif = GIFTestFile(width: 65_535, height: 65_535, palette: palette4)
        gif.image(width: 1, height: 1, indices: [0])
        gif.trailer()
        #expect(pngGIFDecodingFailure { _ = try decoder.decode(gif.data, options: .default) }
            == .tooManyPixels(format: .gif, width: 65_535, height: 65_535, limit: 100_000_000))
        let info = try decoder.info(for: gif.data, options: .default)
        #expect(info.width == 65_535 && info.frameCount == 1)
    }

    /// A small canvas with a frame declaring 65535x65535 pixels: refused before decompressing.
    @Test func hugeFrameIsRefused() throws {
        var gif = GIFTestFile(width: 2, height: 2, palette: palette4)
        gif.append([0x2C, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 8] + GIFTestFile.subBlocks(GIFTestFile.lzw([0, 1, 2])))
        gif.trailer()
        #expect(pngGIFDecodingFailure { _ = try decoder.decode(gif.data, options: .default) }
            == .tooManyPixels(format: .gif, width: 65_535, height: 65_535, limit: 100_000_000))
    }

    @Test func zeroSizedCanvasIsAnInvalidHeader() {
        var gif = GIFTestFile(width: 0, height: 5, palette: palette4)
        gif.image(width: 1, height: 1, indices: [0])
        gif.trailer()
        #expect(pngGIFDecodingFailure { _ = try decoder.decode(gif.data, options: .default) }?.pngGIFKind == "header")
        #expect(pngGIFDecodingFailure { _ = try decoder.info(for: gif.data, options: .default) }?.pngGIFKind == "header")
    }

    @Test func frameLimits() throws {
        var gif = GIFTestFile(width: 4, height: 4, palette: palette4)
        for index in 0..<5 { gif.image(width: 1, height: 1, indices: [UInt8(index % 4)]) }
        gif.trailer()
        let fewFrames = DecodingOptions(limits: DecodingLimits(maxFrameCount: 3))
        #expect(pngGIFDecodingFailure { _ = try decoder.decode(gif.data, options: fewFrames) }
            == .tooManyFrames(format: .gif, count: 4, limit: 3))
        let fewBytes = DecodingOptions(limits: DecodingLimits(maxTotalBytes: 4 * 4 * 4 * 2))
        #expect(pngGIFDecodingFailure { _ = try decoder.decode(gif.data, options: fewBytes) }
            == .animationTooLarge(format: .gif, bytes: 4 * 4 * 4 * 3, limit: 4 * 4 * 4 * 2))
        #expect(try decoder.decode(gif.data, options: DecodingOptions(limits: DecodingLimits(maxFrameCount: 5))).frames.count == 5)
        // Only the first frame is decoded, so the frame limit is not reached.
        #expect(try decoder.decode(gif.data, options: DecodingOptions(firstFrameOnly: true, limits: DecodingLimits(maxFrameCount: 1))).frames.count == 1)
    }

    @Test func badLZWCodeSizeIsCorrupt() {
        var gif = GIFTestFile(width: 1, height: 1, palette: palette4)
        gif.append([0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 12, 1, 0, 0])
        gif.trailer()
        #expect(pngGIFDecodingFailure { _ = try decoder.decode(gif.data, options: .default) }?.pngGIFKind == "corrupt")
    }

    /// Random damage anywhere in real and hand-made files: a typed error or an image, never a crash.
    @Test(arguments: ["giflib/pic/welcome2.gif", "giflib/pic/fire.gif", "giflib/pic/treescap-interlaced.gif"])
    func bitFlipsNeverCrash(file: String) throws {
        let bytes = try [UInt8](Fixtures.data(file))
        var generator = SeededRandom(seed: UInt64(bytes.count))
        var decoded = 0, failed = 0
        for _ in 0..<40 {
            var damaged = bytes
            for _ in 0..<4 {
                let index = Int(generator.next() % UInt64(bytes.count))
                damaged[index] ^= UInt8(1 << (generator.next() % 8))
            }
            let data = Data(damaged)
            if pngGIFDecodingFailure({ _ = try decoder.decode(data, options: .default) }) == nil { decoded += 1 } else { failed += 1 }
            _ = try? decoder.info(for: data, options: .default)
        }
        #expect(decoded + failed == 40)
    }

    @Test func everyPrefixOfAnAnimationIsSafe() throws {
        let bytes = try [UInt8](Fixtures.data("giflib/pic/fire.gif"))
        for length in stride(from: 0, to: bytes.count, by: 61) {
            let cut = Data(bytes[0..<length])
            let failure = pngGIFDecodingFailure { _ = try decoder.decode(cut, options: .default) }
            if let failure { #expect(["empty", "header", "truncated"].contains(failure.pngGIFKind), "\(length): \(failure)") }
            if let image = try? decoder.decode(cut, options: DecodingOptions(allowTruncated: true)) {
                #expect(image.frames.count <= 33)
            }
        }
    }
}
