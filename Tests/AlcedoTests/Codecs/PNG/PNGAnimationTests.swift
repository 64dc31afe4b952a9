import Foundation
import Testing
@testable import Alcedo

/// Builds APNG files by hand (8-bit RGBA, stored zlib blocks) with ``PNGTestFile``.
struct APNGTestFile {
    private(set) var bytes: [UInt8]
    private var sequence: UInt32 = 0
    let width: Int
    let height: Int

    init(width: Int, height: Int, frames: Int, plays: Int) {
        self.width = width
        self.height = height
        bytes = PNGTestFile.signature + PNGTestFile.header(width: UInt32(width), height: UInt32(height), colorType: 6)
            + PNGTestFile.chunk("acTL", PNGTestFile.bigEndian(UInt32(frames)) + PNGTestFile.bigEndian(UInt32(plays)))
    }

    /// The zlib data of `pixels` (RGBA rows of `width` pixels), each row with filter type 0.
    static func imageData(_ pixels: [[UInt8]], width: Int) -> [UInt8] {
        let rows = pixels.count / width
        var raw = [UInt8]()
        for row in 0..<rows {
            raw.append(0)
            for pixel in pixels[(row * width)..<((row + 1) * width)] { raw += pixel }
        }
        return PNGTestFile.zlibStored(raw)
    }

    mutating func frameControl(x: Int = 0, y: Int = 0, width: Int, height: Int, delay: (Int, Int) = (0, 0),
                               dispose: UInt8 = 0, blend: UInt8 = 0, sequenceNumber: UInt32? = nil) {
        var data = PNGTestFile.bigEndian(sequenceNumber ?? sequence)
        data += PNGTestFile.bigEndian(UInt32(width)) + PNGTestFile.bigEndian(UInt32(height))
        data += PNGTestFile.bigEndian(UInt32(x)) + PNGTestFile.bigEndian(UInt32(y))
        data += [UInt8(delay.0 >> 8), UInt8(delay.0 & 0xFF), UInt8(delay.1 >> 8), UInt8(delay.1 & 0xFF), dispose, blend]
        bytes += PNGTestFile.chunk("fcTL", data)
        sequence += 1
    }

    /// The default image (`IDAT`).
    mutating func defaultImage(_ pixels: [[UInt8]]) {
        bytes += PNGTestFile.chunk("IDAT", APNGTestFile.imageData(pixels, width: width))
    }

    /// A frame's data (`fdAT`) for a frame `frameWidth` pixels wide.
    mutating func frameData(_ pixels: [[UInt8]], frameWidth: Int, zlib: [UInt8]? = nil) {
        let data = zlib ?? APNGTestFile.imageData(pixels, width: frameWidth)
        bytes += PNGTestFile.chunk("fdAT", PNGTestFile.bigEndian(sequence) + data)
        sequence += 1
    }

    mutating func end() { bytes += PNGTestFile.chunk("IEND", []) }

    var data: Data { Data(bytes) }
}

private let r: [UInt8] = [255, 0, 0, 255], b: [UInt8] = [0, 0, 255, 255], g: [UInt8] = [0, 255, 0, 255]
private let y: [UInt8] = [255, 255, 0, 255], clear: [UInt8] = [0, 0, 0, 0], halfWhite: [UInt8] = [255, 255, 255, 128]
private let grey: [UInt8] = [128, 128, 128, 255]

/// A frame as rows of characters: R B G Y grey(E) pink(P) transparent(.), `?` for others.
private func picture(_ image: AlcedoImage, frame: Int) -> [String] {
    let names: [RGBA: Character] = [RGBA(red: 255, green: 0, blue: 0): "R", RGBA(red: 0, green: 0, blue: 255): "B",
                                    RGBA(red: 0, green: 255, blue: 0): "G", RGBA(red: 255, green: 255, blue: 0): "Y",
                                    RGBA(red: 128, green: 128, blue: 128): "E", RGBA(red: 255, green: 128, blue: 128): "P",
                                    .clear: "."]
    return (0..<image.height).map { row in
        String((0..<image.width).map { column in names[image.pixel(x: column, y: row, frame: frame)] ?? "?" })
    }
}

@Suite("PNG animation (APNG)")
struct PNGAnimationTests {
    let decoder = PNGDecoder()

    /// Four frames over a 4x2 canvas: the default image, then frames that exercise every
    /// dispose operation (none, background, previous) and both blend operations.
    static func fourFrames(plays: Int = 0, secondSequence: UInt32? = nil, thirdX: Int = 2) -> APNGTestFile {
        var apng = APNGTestFile(width: 4, height: 2, frames: 4, plays: plays)
        apng.frameControl(width: 4, height: 2, delay: (1, 10))
        apng.defaultImage([r, r, r, r, r, r, r, r])
        apng.frameControl(x: 1, y: 0, width: 2, height: 1, delay: (5, 100), dispose: 1, sequenceNumber: secondSequence)
        apng.frameData([b, b], frameWidth: 2)
        apng.frameControl(x: thirdX, y: 0, width: 2, height: 2, delay: (20, 0), dispose: 2, blend: 1)
        apng.frameData([clear, g, halfWhite, clear], frameWidth: 2)
        apng.frameControl(x: 0, y: 0, width: 1, height: 1, delay: (0, 0))
        apng.frameData([y], frameWidth: 1)
        apng.end()
        return apng
    }

    @Test func framesAreCompositedWithDisposeAndBlendOperations() throws {
        let image = try decoder.decode(Self.fourFrames().data, options: .default)
        #expect(image.sourceFormat == .apng)
        #expect(image.frames.count == 4)
        #expect(picture(image, frame: 0) == ["RRRR", "RRRR"])
        #expect(picture(image, frame: 1) == ["RBBR", "RRRR"])
        // Frame 1 was disposed to background; frame 2 is blended over what is left.
        #expect(picture(image, frame: 2) == ["R..G", "RRPR"])
        // Frame 2 was disposed to previous: its area is back as it was before it.
        #expect(picture(image, frame: 3) == ["Y..R", "RRRR"])
        #expect(image.frames.map(\.duration) == [0.1, 0.05, 0.2, 0.1])
        #expect(image.loopCount == 0)
    }

    @Test func infoReadsTheFrameTable() throws {
        let info = try decoder.info(for: Self.fourFrames(plays: 2).data, options: .default)
        #expect(info == ImageInfo(format: .apng, width: 4, height: 2, frameCount: 4, loopCount: 2,
                                  frameDurations: [0.1, 0.05, 0.2, 0.1], hasAlpha: true))
        #expect(try decoder.decode(Self.fourFrames(plays: 2).data, options: .default).loopCount == 2)
    }

    @Test func firstFrameOnlyDecodesTheDefaultImage() throws {
        let image = try decoder.decode(Self.fourFrames().data, options: DecodingOptions(firstFrameOnly: true))
        #expect(image.frames.count == 1 && image.sourceFormat == .apng)
        #expect(picture(image, frame: 0) == ["RRRR", "RRRR"])
    }

    /// A default image with its `fcTL` after `IDAT` is not part of the animation.
    @Test func defaultImageOutsideTheAnimation() throws {
        var apng = APNGTestFile(width: 2, height: 1, frames: 2, plays: 1)
        apng.defaultImage([grey, grey])
        apng.frameControl(width: 2, height: 1, delay: (1, 2))
        apng.frameData([r, b], frameWidth: 2)
        apng.frameControl(width: 1, height: 1, delay: (1, 4))
        apng.frameData([g], frameWidth: 1)
        apng.end()
        let image = try decoder.decode(apng.data, options: .default)
        #expect(image.frames.count == 2)
        #expect(picture(image, frame: 0) == ["RB"])
        #expect(picture(image, frame: 1) == ["GB"])
        #expect(image.frames.map(\.duration) == [0.5, 0.25])
        #expect(image.loopCount == 1)
        #expect(picture(try decoder.decode(apng.data, options: DecodingOptions(firstFrameOnly: true)), frame: 0) == ["EE"])
    }

    /// Inconsistent animation chunks: the file is a still, its default image.
    @Test func brokenAnimationFallsBackToTheDefaultImage() throws {
        var badZlib = APNGTestFile(width: 2, height: 1, frames: 2, plays: 0)
        badZlib.frameControl(width: 2, height: 1)
        badZlib.defaultImage([r, r])
        badZlib.frameControl(width: 2, height: 1)
        badZlib.frameData([], frameWidth: 2, zlib: [0x78, 0x01, 0xFF, 0xFF])
        badZlib.end()
        for (name, file) in [("sequence", Self.fourFrames(secondSequence: 7)), ("outside", Self.fourFrames(thirdX: 3)),
                             ("bad zlib", badZlib)] {
            let image = try decoder.decode(file.data, options: .default)
            #expect(image.frames.count == 1, "\(name)")
            #expect(image.sourceFormat == .apng)
            #expect(picture(image, frame: 0).allSatisfy { $0.allSatisfy { $0 == "R" } }, "\(name)")
            // `info` reads the frame table without decoding: only broken chunks show there.
            #expect(try decoder.info(for: file.data, options: .default).frameCount == (name == "bad zlib" ? 2 : 1), "\(name)")
        }
    }

    @Test func frameLimitsApply() {
        let data = Self.fourFrames().data
        #expect(pngGIFDecodingFailure { _ = try decoder.decode(data, options: DecodingOptions(limits: DecodingLimits(maxFrameCount: 3))) }
            == .tooManyFrames(format: .apng, count: 4, limit: 3))
        #expect(pngGIFDecodingFailure { _ = try decoder.decode(data, options: DecodingOptions(limits: DecodingLimits(maxTotalBytes: 100))) }
            == .animationTooLarge(format: .apng, bytes: 128, limit: 100))
    }

    /// Made by Pillow: a red 4x4 frame of 50 ms, then a half-transparent blue one of 200 ms,
    /// played 3 times.
    @Test func pillowAnimation() throws {
        let data = try Fixtures.data("png-generated/two-frames.apng.png")
        let image = try decoder.decode(data, options: .default)
        #expect(image.frames.count == 2 && image.loopCount == 3)
        #expect(image.frames.map(\.duration) == [0.05, 0.2])
        #expect(image.pixel(x: 3, y: 3, frame: 0) == RGBA(red: 255, green: 0, blue: 0))
        #expect(image.pixel(x: 0, y: 0, frame: 1) == RGBA(red: 0, green: 0, blue: 255, alpha: 128))
    }
}
