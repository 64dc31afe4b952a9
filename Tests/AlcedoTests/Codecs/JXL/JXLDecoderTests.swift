import Foundation
import Testing
@testable import Alcedo

/// The JPEG XL fixtures of `Fixtures/jxl-generated` (made by its `make.sh` with cjxl 0.7) and
/// their references: the PNG or GIF each was encoded from, or djxl's 8-bit decode.
enum JXLFixtures {
    static func data(_ name: String) throws -> Data { try Fixtures.data("jxl-generated/\(name)") }

    static func png(_ path: String) throws -> AlcedoImage {
        try PNGDecoder().decode(Fixtures.data(path), options: DecodingOptions(colorManagement: .ignore))
    }

    /// The largest difference of any sample (alpha included) between two images of the same size.
    static func maxDifference(_ a: AlcedoImage, _ b: AlcedoImage, frame: Int = 0) -> Int {
        precondition(a.width == b.width && a.height == b.height, "sizes differ")
        return zip(a.frames[frame].pixels, b.frames[0].pixels).reduce(0) { max($0, abs(Int($1.0) - Int($1.1))) }
    }

    /// The mean difference of all samples.
    static func meanDifference(_ a: AlcedoImage, _ b: AlcedoImage) -> Double {
        Double(zip(a.pixels, b.pixels).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }) / Double(a.pixels.count)
    }

    /// The largest colour difference over the pixels that are not fully transparent in `b`,
    /// and the largest alpha difference everywhere.
    static func maxVisibleDifference(_ a: AlcedoImage, _ b: AlcedoImage) -> Int {
        var worst = 0
        for index in stride(from: 0, to: a.pixels.count, by: 4) {
            worst = max(worst, abs(Int(a.pixels[index + 3]) - Int(b.pixels[index + 3])))
            guard b.pixels[index + 3] > 0 else { continue }
            for c in 0..<3 { worst = max(worst, abs(Int(a.pixels[index + c]) - Int(b.pixels[index + c]))) }
        }
        return worst
    }
}

@Suite("JPEG XL decoder")
struct JXLDecoderTests {
    @Test("the format is sniffed from a bare codestream and from the container")
    func sniffing() throws {
        #expect(ImageFormat.sniff(try JXLFixtures.data("lossless.jxl")) == .jxl)
        #expect(ImageFormat.sniff(try JXLFixtures.data("recompressed.jxl")) == .jxl)
        #expect(ImageFormat.sniff(Data([0xFF, 0x0A])) == .unknown)
        #expect(ImageFormat(fileExtension: "JXL") == .jxl)
        #expect(ImageFormat.jxl.mimeType == "image/jxl")
    }

    @Test("lossless files decode to exactly the PNG they were made from", arguments: [
        ("lossless.jxl", "jxl-generated/photo.png"), ("alpha-lossless.jxl", "jxl-generated/alpha.png"),
    ])
    func lossless(_ name: String, _ source: String) throws {
        let image = try ImageCodecRegistry.shared.decode(JXLFixtures.data(name))
        let reference = try JXLFixtures.png(source)
        #expect(image.sourceFormat == .jxl)
        #expect(image.pixelSize == reference.pixelSize)
        #expect(JXLFixtures.maxVisibleDifference(image, reference) == 0)
    }

    @Test("lossy and recompressed-JPEG files match djxl's decode within 1",
          arguments: ["lossy.jxl", "alpha-lossy.jxl", "recompressed.jxl"])
    func matchesDjxl(_ name: String) throws {
        let image = try JXLDecoder().decode(JXLFixtures.data(name))
        let reference = try JXLFixtures.png("jxl-generated/\(name).ref.png")
        #expect(image.pixelSize == reference.pixelSize)
        #expect(JXLFixtures.maxVisibleDifference(image, reference) <= 1)
    }

    @Test("16-bit RGB and gray lossless files give their samples rounded to 8 bits, within 1")
    func sixteenBit() throws {
        // The samples make_sources.py wrote.
        let rgb = try JXLDecoder().decode(JXLFixtures.data("rgb16.jxl"))
        let gray = try JXLDecoder().decode(JXLFixtures.data("gray16.jxl"))
        func eight(_ value: Int) -> Int { (value * 255 + 32_767) / 65_535 }
        var worst = 0
        for y in 0..<32 {
            for x in 0..<48 {
                let p = rgb.pixel(x: x, y: y)
                let expected = [x * 1365, y * 2047, (x * y * 37) % 65536].map(eight)
                worst = max(worst, abs(Int(p.red) - expected[0]), abs(Int(p.green) - expected[1]), abs(Int(p.blue) - expected[2]))
            }
            for x in 0..<64 {
                let p = gray.pixel(x: x, y: y)
                let expected = eight((x * 1024 + y * 31) % 65536)
                worst = max(worst, abs(Int(p.red) - expected), abs(Int(p.green) - expected), abs(Int(p.blue) - expected))
                #expect(p.alpha == 255)
            }
        }
        #expect(worst <= 1)
    }

    @Test("a lossy file (distance 1.0) stays close to its source: mean difference under 1.5 levels, none over 96")
    func lossyTolerance() throws {
        let image = try JXLDecoder().decode(JXLFixtures.data("lossy.jxl"))
        let source = try JXLFixtures.png("jxl-generated/photo.png")
        #expect(JXLFixtures.maxDifference(image, source) <= 96)
        #expect(JXLFixtures.meanDifference(image, source) < 1.5)
    }

    @Test("a recompressed JPEG decodes within 3 levels of libjpeg's decode of the original")
    func recompressedJPEG() throws {
        let image = try JXLDecoder().decode(JXLFixtures.data("recompressed.jxl"))
        let jpeg = try JPEGDecoder().decode(Fixtures.data("jpeg-generated/orientation-1.jpg"))
        #expect(image.pixelSize == jpeg.pixelSize)
        #expect(JXLFixtures.maxDifference(image, jpeg) <= 3)
        let info = try JXLDecoder().info(for: JXLFixtures.data("recompressed.jxl"))
        #expect(info.compression == "recompressed JPEG")
    }

    @Test("an animation decodes every frame with its duration and loop count, equal to the GIF it came from")
    func animation() throws {
        let data = try JXLFixtures.data("anim.jxl")
        let image = try JXLDecoder().decode(data)
        let gif = try GIFDecoder().decode(JXLFixtures.data("anim.gif"))
        #expect(image.frames.count == 3)
        // cjxl 0.7 does not carry the GIF's loop count over: the file says 0 (forever).
        #expect(image.loopCount == 0)
        #expect(image.frames.map(\.duration) == [0.1, 0.2, 0.3])
        for index in 0..<3 {
            #expect(image.frames[index].pixels == gif.frames[index].pixels, "frame \(index)")
        }
        let info = try JXLDecoder().info(for: data)
        #expect(info.frameCount == 3 && info.loopCount == 0 && info.frameDurations == [0.1, 0.2, 0.3])
        let first = try JXLDecoder().decode(data, options: DecodingOptions(firstFrameOnly: true))
        #expect(first.frames.count == 1 && first.pixels == gif.frames[0].pixels)
    }

    @Test("info reports size, alpha, bit depth and compression without decoding")
    func info() throws {
        let lossless = try JXLDecoder().info(for: JXLFixtures.data("alpha-lossless.jxl"))
        #expect(lossless.width == 64 && lossless.height == 48 && lossless.hasAlpha)
        #expect(lossless.bitDepth == 8 && lossless.compression == "lossless")
        let lossy = try JXLDecoder().info(for: JXLFixtures.data("lossy.jxl"))
        #expect(!lossy.hasAlpha && lossy.compression == "lossy (XYB)" && lossy.frameCount == 1)
        #expect(try JXLDecoder().info(for: JXLFixtures.data("rgb16.jxl")).bitDepth == 16)
    }

    @Test("an embedded Display P3 profile is converted to sRGB: lossless within 2, lossy (distance 1) within 48 and 2 on average",
          arguments: [("p3-lossless.jxl", 2), ("p3-lossy.jxl", 48)])
    func displayP3(_ name: String, _ tolerance: Int) throws {
        let image = try JXLDecoder().decode(JXLFixtures.data(name))
        let reference = try JXLFixtures.png("color-generated/p3.png.srgb.png")
        #expect(JXLFixtures.maxDifference(image, reference) <= tolerance)
        #expect(JXLFixtures.meanDifference(image, reference) < 2)
        let info = try JXLDecoder().info(for: JXLFixtures.data(name))
        #expect(info.colorProfile?.colorSpace == .rgb)
        if name == "p3-lossless.jxl" {
            let kept = try JXLDecoder().decode(JXLFixtures.data(name), options: DecodingOptions(colorManagement: .preserve))
            #expect(kept.colorMetadata.pixelProfile != nil)
            #expect(JXLFixtures.maxDifference(kept, try JXLFixtures.png("color-generated/p3.png")) == 0)
        }
    }

    @Test("limits are checked from the header before any frame buffer")
    func limits() throws {
        let data = try JXLFixtures.data("lossless.jxl")
        #expect(ErrorReasons.decoding { () throws(AlcedoError) in _ = try JXLDecoder().decode(data, options: DecodingOptions(limits: DecodingLimits(maxPixelCount: 1000))) } == .tooManyPixels(format: .jxl, width: 128, height: 96, limit: 1000))
        let animation = try JXLFixtures.data("anim.jxl")
        #expect(ErrorReasons.decoding { () throws(AlcedoError) in _ = try JXLDecoder().decode(animation, options: DecodingOptions(limits: DecodingLimits(maxFrameCount: 2))) } == .tooManyFrames(format: .jxl, count: 3, limit: 2))
        do {
            _ = try JXLDecoder().decode(data, options: DecodingOptions(limits: DecodingLimits(maxWorkingMemory: 10_000)))
            Issue.record("expected a working-memory error")
        } catch {
            guard case .workingMemoryTooLarge(.jxl, _, _, 10_000)? = error.decodingReason else { Issue.record("\(error)"); return }
        }
    }

    @Test("the CPU-time budget stops libjxl inside a frame")
    func deadline() throws {
        let data = try JXLEncoder(effort: 1).encode(JXLTestImages.noise(width: 1024, height: 1024, seed: 3), options: EncodingOptions(quality: 90))
        let options = DecodingOptions(limits: DecodingLimits(decodingTimeout: .microseconds(1)))
        #expect(ErrorReasons.decoding { () throws(AlcedoError) in _ = try JXLDecoder().decode(data, options: options) } == .timedOut(format: .jxl, limit: .microseconds(1)))
    }

    @Test("truncated and corrupted files end in typed errors")
    func brokenFiles() throws {
        let data = try JXLFixtures.data("lossy.jxl")
        #expect(ErrorReasons.decoding { () throws(AlcedoError) in _ = try JXLDecoder().decode(Data()) } == .emptyData)
        do {
            _ = try JXLDecoder().decode(data.prefix(data.count / 2))
            Issue.record("a truncated file decoded")
        } catch {
            guard case .truncated(.jxl, _)? = error.decodingReason else { Issue.record("\(error)"); return }
        }
        // A still cut inside its only frame has nothing whole to return, even when truncation is allowed.
        let cut = data.prefix(data.count * 3 / 4)
        #expect(ErrorReasons.decoding { () throws(AlcedoError) in _ = try JXLDecoder().decode(cut, options: DecodingOptions(allowTruncated: true)) }
                .map { if case .truncated = $0 { true } else { false } } == true)
        // A header that declares 2^30 x 2^30 pixels: refused before any allocation.
        do {
            _ = try JXLDecoder().decode(JXLTestImages.lyingHeader())
            Issue.record("a lying header decoded")
        } catch {
            guard let reason = error.decodingReason else { Issue.record("\(error)"); return }
            switch reason {
            case .tooManyPixels(.jxl, _, _, _), .invalidHeader(.jxl, _), .truncated(.jxl, _): break
            default: Issue.record("\(reason)")
            }
        }
        AVIFHEIFFixtures.sweep(data, seed: 21) { bytes in _ = try? JXLDecoder().decode(bytes) }
        AVIFHEIFFixtures.sweep(try JXLFixtures.data("anim.jxl"), seed: 22) { bytes in _ = try? JXLDecoder().decode(bytes) }
    }
}

/// Pictures for the JPEG XL tests made in memory.
enum JXLTestImages {
    /// `width` x `height` of seeded noise, opaque.
    static func noise(width: Int, height: Int, seed: UInt64) -> AlcedoImage {
        var random = SeededRandom(seed: seed)
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for index in pixels.indices where index % 4 != 3 { pixels[index] = UInt8.random(in: 0...255, using: &random) }
        return AlcedoImage(width: width, height: height, pixels: pixels)
    }

    /// A bare codestream whose SizeHeader declares the largest size a JPEG XL can
    /// (2^30 x 2^30) and then ends.
    static func lyingHeader() -> Data {
        // FF 0A, then the SizeHeader: small = 0, height: 2-bit selector 3 (30 bits) with
        // height-1 = 2^30-1, ratio 0, width: selector 3 and width-1 = 2^30-1.
        var bits: [Bool] = []
        func put(_ value: Int, _ count: Int) { for i in 0..<count { bits.append((value >> i) & 1 == 1) } }
        put(0, 1)                 // small
        put(3, 2); put((1 << 30) - 1, 30)  // height
        put(0, 3)                 // ratio
        put(3, 2); put((1 << 30) - 1, 30)  // width
        put(0, 64)                // the rest of the header, zero
        var bytes: [UInt8] = [0xFF, 0x0A]
        for start in stride(from: 0, to: bits.count, by: 8) {
            var byte: UInt8 = 0
            for i in 0..<8 where start + i < bits.count && bits[start + i] { byte |= 1 << i }
            bytes.append(byte)
        }
        return Data(bytes)
    }
}

/// The reason of the error a body throws, for `#expect` (AlcedoError is not Equatable).
enum ErrorReasons {
    static func decoding(_ body: () throws(AlcedoError) -> Void) -> DecodingErrorReason? {
        do { try body(); return nil } catch { if let reason = error.decodingReason { return reason }; return nil }
    }

    static func encoding(_ body: () throws(AlcedoError) -> Void) -> EncodingErrorReason? {
        do { try body(); return nil } catch { if let reason = error.encodingReason { return reason }; return nil }
    }
}
