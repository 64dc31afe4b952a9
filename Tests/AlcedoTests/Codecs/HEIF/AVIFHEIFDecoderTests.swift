import AlcedoTestSupport
import Foundation
import Testing
@testable import Alcedo

/// The AVIF and HEIC fixtures of `Fixtures/avif-heif-generated` (made by its `make.py` with
/// avifenc and heif-enc) and their reference decodes by avifdec and heif-convert.
enum AVIFHEIFFixtures {
    static func data(_ name: String) throws -> Data { try Fixtures.data("avif-heif-generated/\(name)") }

    static func reference(_ name: String) throws -> AlcedoImage {
        try PNGDecoder().decode(data("\(name).ref.png"), options: DecodingOptions(colorManagement: .ignore))
    }

    /// Runs `decode` on about 40 prefixes of `data` and on 24 copies with three random bits
    /// flipped: each must give an image or a typed error, never a crash. (Kept small: these
    /// run synchronously on the test pool; `scripts/fuzz.sh` explores much further.)
    static func sweep(_ data: Data, seed: UInt64, _ decode: (Data) -> Void) {
        for length in stride(from: 0, to: data.count, by: max(1, data.count / 37)) {
            decode(data.prefix(length))
        }
        var random = SeededRandom(seed: seed)
        for _ in 0..<24 {
            var flipped = data
            for _ in 0..<3 {
                let index = Int.random(in: 0..<flipped.count, using: &random)
                flipped[index] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
            }
            decode(flipped)
        }
    }

    /// The largest difference of any sample (alpha included) between two images of the same size.
    static func maxDifference(_ a: [UInt8], _ b: [UInt8]) -> Int {
        precondition(a.count == b.count, "sizes differ")
        return zip(a, b).reduce(0) { max($0, abs(Int($1.0) - Int($1.1))) }
    }
}

@Suite("AVIF decoder")
struct AVIFDecoderTests {
    @Test("still, alpha, 10 and 12-bit, 4:2:0/4:2:2/4:4:4 and grid files match avifdec within 2",
          arguments: ["still-420", "alpha-lossless", "alpha-10bit", "still-12bit", "grid-2x2"])
    func matchesAvifdec(_ name: String) throws {
        let image = try ImageCodecRegistry.shared.decode(AVIFHEIFFixtures.data("\(name).avif"))
        let reference = try AVIFHEIFFixtures.reference("\(name).avif")
        #expect(image.sourceFormat == .avif)
        #expect(image.width == reference.width && image.height == reference.height)
        #expect(AVIFHEIFFixtures.maxDifference(image.pixels, reference.pixels) <= 2)
    }

    @Test("alpha is straight and present where the file has it")
    func alpha() throws {
        let image = try AVIFDecoder().decode(AVIFHEIFFixtures.data("alpha-lossless.avif"))
        #expect(image.hasAlpha)
        #expect(image.pixel(x: 0, y: 10).alpha == 0)
        #expect(image.pixel(x: 39, y: 10).alpha == 255)
        #expect(try AVIFDecoder().info(for: AVIFHEIFFixtures.data("alpha-lossless.avif")).hasAlpha)
        #expect(!(try AVIFDecoder().decode(AVIFHEIFFixtures.data("still-420.avif")).hasAlpha))
    }

    @Test("irot turns the picture anti-clockwise; with orientation off it stays as stored")
    func rotation() throws {
        let data = try AVIFHEIFFixtures.data("irot1.avif")
        let stored = try AVIFHEIFFixtures.reference("irot1.avif")  // avifdec does not apply irot
        let image = try AVIFDecoder().decode(data)
        #expect(image.width == 24 && image.height == 40)
        #expect(image.orientation == .left)
        let expected = ImageOrientation.left.apply(to: stored.pixels, width: stored.width, height: stored.height)
        #expect(AVIFHEIFFixtures.maxDifference(image.pixels, expected.pixels) <= 2)
        // The red marker of the stored top-left corner is now bottom-left.
        #expect(image.pixel(x: 1, y: 38).red > 200 && image.pixel(x: 1, y: 38).green < 60)
        let info = try AVIFDecoder().info(for: data)
        #expect(info.width == 24 && info.height == 40 && info.orientation == .left)
        let asStored = try AVIFDecoder().decode(data, options: DecodingOptions(appliesOrientation: false))
        #expect(asStored.width == 40 && AVIFHEIFFixtures.maxDifference(asStored.pixels, stored.pixels) <= 2)
    }

    @Test("imir mode 1 mirrors left to right")
    func mirror() throws {
        let image = try AVIFDecoder().decode(AVIFHEIFFixtures.data("imir1.avif"))
        let stored = try AVIFHEIFFixtures.reference("imir1.avif")
        #expect(image.orientation == .upMirrored)
        let expected = ImageOrientation.upMirrored.apply(to: stored.pixels, width: stored.width, height: stored.height)
        #expect(AVIFHEIFFixtures.maxDifference(image.pixels, expected.pixels) <= 2)
        #expect(image.pixel(x: 38, y: 1).red > 200)
    }

    @Test("an image sequence decodes every frame with its duration")
    func animation() throws {
        let data = try AVIFHEIFFixtures.data("animated.avif")
        let image = try AVIFDecoder().decode(data)
        #expect(image.frames.count == 3)
        #expect(image.frames.allSatisfy { abs($0.duration - 0.1) < 1e-6 })
        for index in 0..<3 {
            let reference = try AVIFHEIFFixtures.reference("animated.avif.\(index)")
            #expect(AVIFHEIFFixtures.maxDifference(image.frames[index].pixels, reference.pixels) <= 2)
        }
        let info = try AVIFDecoder().info(for: data)
        #expect(info.frameCount == 3 && info.frameDurations.count == 3)
        let first = try AVIFDecoder().decode(data, options: DecodingOptions(firstFrameOnly: true))
        #expect(first.frames.count == 1)
    }

    @Test("limits are checked from the header before decoding")
    func limits() throws {
        let still = try AVIFHEIFFixtures.data("still-420.avif")
        let small = DecodingOptions(limits: DecodingLimits(maxPixelCount: 100))
        #expect(JPEGTestSupport.failure { () throws(AlcedoError) in try AVIFDecoder().decode(still, options: small) } != "none")
        do throws(AlcedoError) {
            _ = try AVIFDecoder().decode(still, options: small)
        } catch {
            guard case .decodingFailed(.tooManyPixels)? = error.processorCause else { Issue.record("expected tooManyPixels, got \(error)"); return }
        }
        let frames = DecodingOptions(limits: DecodingLimits(maxFrameCount: 2))
        let animated = try AVIFHEIFFixtures.data("animated.avif")
        do throws(AlcedoError) {
            _ = try AVIFDecoder().decode(animated, options: frames)
            Issue.record("three frames passed a limit of two")
        } catch {
            guard case .decodingFailed(let reason)? = error.processorCause else { Issue.record("\(error)"); return }
            guard case .tooManyFrames = reason else { Issue.record("expected tooManyFrames, got \(reason)"); return }
        }
    }

    @Test("every prefix and random bit flips give a typed error or an image, never a crash")
    func hostileInput() throws {
        for name in ["still-420.avif", "alpha-10bit.avif", "animated.avif"] {
            AVIFHEIFFixtures.sweep(try AVIFHEIFFixtures.data(name), seed: 0xA71F) { bytes in
                _ = try? AVIFDecoder().decode(bytes)
                _ = try? AVIFDecoder().info(for: bytes)
            }
        }
        #expect(JPEGTestSupport.failure { () throws(AlcedoError) in try AVIFDecoder().decode(Data([0, 0, 0, 12])) } != "none")
    }
}

@Suite("HEIF decoder")
struct HEIFDecoderTests {
    @Test("HEIC files (8-bit, alpha, 10-bit, grids full, cropped, 10-bit and turned, irot/imir/clap) match heif-convert within 2",
          arguments: ["still", "alpha", "gray-10bit", "grid-2x2", "grid-cropped", "grid-10bit", "grid-irot1-imir0",
                      "irot1", "irot2", "irot3", "imir0", "imir1", "clap"])
    func matchesHeifConvert(_ name: String) throws {
        let image = try ImageCodecRegistry.shared.decode(AVIFHEIFFixtures.data("\(name).heic"))
        let reference = try AVIFHEIFFixtures.reference("\(name).heic")
        #expect(image.sourceFormat == .heic)
        #expect(image.width == reference.width && image.height == reference.height)
        #expect(AVIFHEIFFixtures.maxDifference(image.pixels, reference.pixels) <= 2)
    }

    @Test("alpha comes through and info reads the header")
    func alphaAndInfo() throws {
        let data = try AVIFHEIFFixtures.data("alpha.heic")
        let info = try HEIFDecoder().info(for: data)
        #expect(info.width == 40 && info.height == 24 && info.hasAlpha && info.format == .heic)
        let image = try HEIFDecoder().decode(data)
        #expect(image.pixel(x: 0, y: 5).alpha < 10 && image.pixel(x: 39, y: 5).alpha > 245)
    }

    @Test("libheif applies irot as the AVIF decoder does (the same HEIF transform boxes)")
    func transforms() throws {
        let data = try AVIFHEIFFixtures.data("irot1.avif")
        let viaHEIF = try HEIFDecoder(format: .heif).decode(data)
        let viaAVIF = try AVIFDecoder().decode(data)
        #expect(viaHEIF.width == viaAVIF.width && viaHEIF.height == viaAVIF.height)
        #expect(AVIFHEIFFixtures.maxDifference(viaHEIF.pixels, viaAVIF.pixels) <= 2)
        let asStored = try HEIFDecoder(format: .heif).decode(data, options: DecodingOptions(appliesOrientation: false))
        #expect(asStored.width == 40)
    }

    @Test("limits, prefixes and bit flips give typed errors, never a crash")
    func hostileInput() throws {
        let data = try AVIFHEIFFixtures.data("still.heic")
        do throws(AlcedoError) {
            _ = try HEIFDecoder().decode(data, options: DecodingOptions(limits: DecodingLimits(maxPixelCount: 100)))
            Issue.record("a 40x24 image passed a limit of 100 pixels")
        } catch {
            guard case .decodingFailed(.tooManyPixels)? = error.processorCause else { Issue.record("expected tooManyPixels, got \(error)"); return }
        }
        AVIFHEIFFixtures.sweep(data, seed: 0x4E1C) { bytes in
            _ = try? HEIFDecoder().decode(bytes)
            _ = try? HEIFDecoder().info(for: bytes)
        }
    }
}

@Suite("AVIF encoder")
struct AVIFEncoderTests {
    static func pattern(width: Int = 48, height: Int = 32, alpha: Bool = false) -> AlcedoImage {
        var pixels = [UInt8]()
        for y in 0..<height {
            for x in 0..<width {
                pixels += [UInt8(x * 255 / (width - 1)), UInt8(y * 255 / (height - 1)), 128, alpha ? UInt8(x * 255 / (width - 1)) : 255]
            }
        }
        return AlcedoImage(width: width, height: height, pixels: pixels)
    }

    @Test("lossless round trip is exact, alpha included")
    func lossless() throws {
        let image = Self.pattern(alpha: true)
        let data = try AVIFEncoder().encode(image, options: EncodingOptions(lossless: true))
        #expect(ImageFormat.sniff(data) == .avif)
        let decoded = try AVIFDecoder().decode(data)
        #expect(decoded.pixels == image.pixels)
    }

    @Test("lossy quality: close to the source, and a lower quality gives fewer bytes")
    func lossy() throws {
        let image = Self.pattern()
        let high = try AVIFEncoder().encode(image, options: EncodingOptions(quality: 90))
        let low = try AVIFEncoder().encode(image, options: EncodingOptions(quality: 20))
        #expect(low.count < high.count)
        let decoded = try AVIFDecoder().decode(high)
        #expect(AVIFHEIFFixtures.maxDifference(decoded.pixels, image.pixels) <= 12)
        #expect(!decoded.hasAlpha)
        #expect(throws: AlcedoError.self) { try AVIFEncoder().encode(image, options: EncodingOptions(quality: 0)) }
    }

    @Test("animations keep their frames and durations; the registry and the serializer write AVIF")
    func animationAndRegistry() throws {
        let a = Self.pattern(), b = Self.pattern(alpha: true)
        let animated = AlcedoImage(width: 48, height: 32, frames: [
            AlcedoImage.Frame(pixels: a.pixels, duration: 0.1), AlcedoImage.Frame(pixels: b.pixels, duration: 0.25)])
        let data = try ImageCodecRegistry.shared.encode(animated, as: .avif, options: EncodingOptions(lossless: true))
        let decoded = try ImageCodecRegistry.shared.decode(data)
        #expect(decoded.frames.count == 2)
        #expect(abs(decoded.frames[1].duration - 0.25) < 1e-6)
        #expect(decoded.frames[1].pixels == b.pixels)
        let serialized = try FormatIndicatedCacheSerializer.avif().serializedData(with: a, original: nil)
        #expect(ImageFormat.sniff(serialized) == .avif)
    }

    @Test("preserve: the AVIF carries the source profile")
    func embedsProfile() throws {
        let image = try PNGDecoder().decode(ColorFixtures.data("p3.png"), options: DecodingOptions(colorManagement: .preserve))
        let data = try AVIFEncoder().encode(image, options: EncodingOptions(lossless: true))
        #expect(try AVIFDecoder().info(for: data).colorProfile?.description == "Display P3 (Alcedo test)")
        let converted = try AVIFDecoder().decode(data)
        #expect(ColorFixtures.maxDifference(converted, try ColorFixtures.reference("p3.png")) <= 2)
    }
}

@Suite("AVIF and HEIF libraries loaded on first use")
struct AVIFHEIFLazyLoadingTests {
    /// The shared libraries the running test executable needs at start, from its ELF dynamic
    /// section as `readelf -d` prints it.
    static func neededLibraries() throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/readelf")
        process.arguments = ["-d", "/proc/self/exe".resolvingSymlinks]
        let pipe = Pipe()
        process.standardOutput = pipe
        try ProcessLaunch.run(process)
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: output, as: UTF8.self).split(separator: "\n")
            .filter { $0.contains("(NEEDED)") }
            .compactMap { line in line.split(separator: "[").last?.split(separator: "]").first.map(String.init) }
    }

    @Test("the executable does not link libheif or libavif; decoding loads them", .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/readelf")))
    func loadedOnFirstUse() throws {
        let needed = try Self.neededLibraries()
        #expect(needed.contains { $0.hasPrefix("libc.so") }, "readelf listed \(needed)")
        #expect(!needed.contains { $0.hasPrefix("libheif") || $0.hasPrefix("libavif") }, "needed at start: \(needed)")

        let avif = try AVIFDecoder().decode(AVIFHEIFFixtures.data("still-420.avif"))
        let heic = try HEIFDecoder().decode(AVIFHEIFFixtures.data("still.heic"))
        #expect(avif.width > 0 && heic.width > 0)
        // Read to the end: /proc files state a size of 0.
        let maps = String(decoding: try #require(FileHandle(forReadingAtPath: "/proc/self/maps")).readDataToEndOfFile(), as: UTF8.self)
        #expect(maps.contains("libavif.so") && maps.contains("libheif.so"))
    }
}

private extension String {
    /// The path a symbolic link (such as `/proc/self/exe`) points to, or the path itself.
    var resolvingSymlinks: String { (try? FileManager.default.destinationOfSymbolicLink(atPath: self)) ?? self }
}
