import AlcedoTestSupport
import Foundation
import Testing
@testable import Alcedo

/// Generators of hostile JPEG, WebP and processing inputs, made at test time from the small
/// fixtures (nothing large is committed), and what each must end with: an image or a typed
/// error, bounded before the expensive work. Expensive cases are checked by the error reason
/// that stops them, never by a clock.
@Suite("Hostile JPEG, WebP and processing inputs")
struct HostileJPEGWebPTests {
    // MARK: Generators

    enum Generate {
        /// `bytes` with `insert` placed at `offset`.
        static func inserting(_ insert: [UInt8], into bytes: [UInt8], at offset: Int) -> [UInt8] {
            Array(bytes[..<offset]) + insert + Array(bytes[offset...])
        }

        /// Recoverable corruption of a well-formed JPEG, by name: three bytes of garbage before
        /// the first DHT segment, a stray RST marker in the middle of the first scan's data,
        /// four bytes of garbage after the first scan, and an EOI marker in the middle of the
        /// first scan (the data seems to end there: truncation, not corruption).
        static func corruptJPEGs(_ bytes: [UInt8]) -> [(name: String, bytes: [UInt8])] {
            let segments = JPEGTestSupport.segments(bytes)
            guard let dht = segments.first(where: { $0.marker == 0xC4 }),
                  let scan = segments.first(where: { $0.marker == 0xDA }) else { return [] }
            let middle = (scan.range.lowerBound + scan.range.upperBound) / 2
            return [
                ("extraneous bytes before DHT", inserting([0x12, 0x34, 0x56], into: bytes, at: dht.range.lowerBound)),
                ("RST marker inside the first scan", inserting([0xFF, 0xD3], into: bytes, at: middle)),
                ("garbage after the first scan", inserting([0x00, 0x11, 0x22, 0x33], into: bytes, at: scan.range.upperBound)),
                ("EOI marker inside the first scan", inserting([0xFF, 0xD9], into: bytes, at: middle)),
            ]
        }

        /// A progressive JPEG of `width` x `height` (flat grey, so each AC scan is a few bytes of
        /// end-of-band runs) with its smallest scan repeated `repeats` more times before the EOI.
        static func manyScans(width: Int, height: Int, repeats: Int) throws -> [UInt8] {
            let flat = AlcedoImage(width: width, height: height,
                                   pixels: [UInt8](repeating: 128, count: width * height * 4), sourceFormat: .unknown)
            let bytes = [UInt8](try JPEGEncoder(progressive: true).encode(flat, options: EncodingOptions(quality: 75)))
            let segments = JPEGTestSupport.segments(bytes)
            let scans = segments.filter { $0.marker == 0xDA }
            guard let smallest = scans.min(by: { $0.range.count < $1.range.count }),
                  let end = segments.last(where: { $0.marker == 0xD9 }) else { return bytes }
            var hostile = Array(bytes[..<end.range.lowerBound])
            for _ in 0..<repeats { hostile += bytes[smallest.range] }
            return hostile + [0xFF, 0xD9]
        }

        /// The header of a progressive JPEG of `width` x `height` with `components` components
        /// (4: CMYK) up to its first scan (a DC scan over every component), then a few bytes
        /// of data: enough for libjpeg to read the header and size its coefficient buffer.
        static func progressiveHeader(width: Int, height: Int, components: Int) -> [UInt8] {
            var bytes: [UInt8] = [0xFF, 0xD8]
            bytes += [0xFF, 0xDB, 0x00, 0x43, 0x00] + [UInt8](repeating: 1, count: 64)
            bytes += [0xFF, 0xC2, 0x00, UInt8(8 + 3 * components), 8,
                      UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8), UInt8(width & 0xFF), UInt8(components)]
            for component in 0..<components { bytes += [UInt8(component + 1), 0x11, 0x00] }
            bytes += [0xFF, 0xC4, 0x00, 0x14, 0x00, 1] + [UInt8](repeating: 0, count: 15) + [0]
            bytes += [0xFF, 0xDA, 0x00, UInt8(6 + 2 * components), UInt8(components)]
            for component in 0..<components { bytes += [UInt8(component + 1), 0x00] }
            bytes += [0x00, 0x00, 0x00]
            return bytes + [UInt8](repeating: 0, count: 64) + [0xFF, 0xD9]
        }

        /// An animated WebP whose canvas is `width` x `height` and whose frames are the 1x1
        /// lossless picture at the given offsets (even numbers): the 92-byte "tiny frame on a
        /// huge canvas" with one offset.
        static func tinyFramesOnCanvas(width: Int, height: Int, offsets: [(x: Int, y: Int)]) -> Data {
            typealias W = WebPHostileInputTests
            let animation = W.chunk("ANIM", [0, 0, 0, 0, 0, 0])
            let frames = offsets.flatMap { offset in
                W.chunk("ANMF", W.le(offset.x / 2, bytes: 3) + W.le(offset.y / 2, bytes: 3) + W.le(0, bytes: 6)
                        + W.le(100, bytes: 3) + [0] + W.tinyVP8L)
            }
            return W.extended(width: width, height: height, flags: 0x12, rest: animation + frames)
        }
    }

    // MARK: JPEG: recoverable corruption

    /// djpeg's decodes (RGB hash) of the corrupt files made from each fixture, by case name; the
    /// clean picture's hash is 0xAA91848285BEB793 for both files.
    static let djpegHashes: [String: [String: UInt64]] = [
        "go-image/image-testdata/video-001.q50.420.jpeg": [
            "extraneous bytes before DHT": 0xAA91_8482_85BE_B793,
            "RST marker inside the first scan": 0xB04A_885D_C790_D4C3,
            "garbage after the first scan": 0xAA91_8482_85BE_B793,
        ],
        "go-image/image-testdata/video-001.q50.420.progressive.jpeg": [
            "extraneous bytes before DHT": 0xAA91_8482_85BE_B793,
            "RST marker inside the first scan": 0x96BF_686E_CD87_F291,
            "garbage after the first scan": 0xAA91_8482_85BE_B793,
        ],
    ]

    @Test("recoverable corruption decodes to djpeg's picture; an EOI inside a scan is still truncation",
          arguments: ["go-image/image-testdata/video-001.q50.420.jpeg", "go-image/image-testdata/video-001.q50.420.progressive.jpeg"])
    func recoverableCorruption(_ file: String) throws {
        let bytes = [UInt8](try Fixtures.data(file))
        let expected = try #require(Self.djpegHashes[file])
        let cases = Generate.corruptJPEGs(bytes)
        #expect(cases.count == 4)
        for (name, corrupt) in cases {
            guard let hash = expected[name] else {
                let reason = JPEGTestSupport.decodingReason { () throws(AlcedoError) in try JPEGDecoder().decode(Data(corrupt)) }
                guard case .truncated(.jpeg, _) = reason else {
                    Issue.record("\(name): expected truncated, got \(String(describing: reason))")
                    continue
                }
                let lenient = try JPEGDecoder().decode(Data(corrupt), options: DecodingOptions(allowTruncated: true))
                #expect(lenient.width == 150 && lenient.height == 103)
                continue
            }
            do {
                let image = try JPEGDecoder().decode(Data(corrupt))
                #expect(image.width == 150 && image.height == 103, "\(name)")
                #expect(JPEGTestSupport.rgbHash(image.pixels) == hash, "\(name): not djpeg's picture")
            } catch {
                Issue.record("\(name): \(error)")
            }
        }
    }

    @Test("the corrupt files match djpeg run now, when djpeg is installed")
    func corruptionAgainstLiveDjpeg() throws {
        guard let djpeg = ["/usr/bin/djpeg", "/usr/local/bin/djpeg"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            return
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let bytes = [UInt8](try Fixtures.data("go-image/image-testdata/video-001.q50.420.progressive.jpeg"))
        for (index, (name, corrupt)) in Generate.corruptJPEGs(bytes).enumerated() where !name.hasPrefix("EOI") {
            let input = folder.appendingPathComponent("\(index).jpg")
            let output = folder.appendingPathComponent("\(index).ppm")
            try Data(corrupt).write(to: input)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: djpeg)
            process.arguments = ["-outfile", output.path, input.path]
            process.standardError = FileHandle.nullDevice
            try ProcessLaunch.run(process)
            process.waitUntilExit()
            #expect(process.terminationStatus == 2, "\(name): djpeg warns (exit 2) and shows the picture")
            let reference = try PPMImage(data: try Data(contentsOf: output))
            let image = try JPEGDecoder().decode(Data(corrupt))
            let rgb = stride(from: 0, to: image.pixels.count, by: 4).flatMap { image.pixels[$0..<$0 + 3] }
            #expect(rgb == reference.rgb, "\(name)")
        }
    }

    // MARK: JPEG: CPU

    @Test("a progressive file repeating one scan a thousand times stops after 64 passes over its blocks")
    func repeatedScans() throws {
        let hostile = try Generate.manyScans(width: 1024, height: 768, repeats: 1_010)
        let reason = JPEGTestSupport.decodingReason { () throws(AlcedoError) in try JPEGDecoder().decode(Data(hostile)) }
        guard case .corrupt(.jpeg, let message) = reason else {
            Issue.record("expected corrupt, got \(String(describing: reason))")
            return
        }
        #expect(message.contains("visit every block more than 64 times"), "\(message)")
        // The same picture with its scans once each decodes.
        let clean = try Generate.manyScans(width: 1024, height: 768, repeats: 0)
        #expect(try JPEGDecoder().decode(Data(clean)).width == 1024)
    }

    @Test("the decoding deadline is checked inside libjpeg, for baseline and progressive files", arguments: [
        "go-image/image-testdata/video-001.q50.420.jpeg", "go-image/image-testdata/video-001.q50.420.progressive.jpeg",
    ])
    func deadline(_ file: String) throws {
        let data = try Fixtures.data(file)
        let options = DecodingOptions(limits: DecodingLimits(decodingTimeout: .zero))
        let reason = JPEGTestSupport.decodingReason { () throws(AlcedoError) in try JPEGDecoder().decode(data, options: options) }
        #expect(reason == .timedOut(format: .jpeg, limit: .zero))
        #expect(try JPEGDecoder().decode(data).width == 150)
    }

    // MARK: JPEG: memory

    @Test("a progressive CMYK 10000x10000 header is refused for its coefficient buffer before libjpeg allocates it")
    func progressiveCoefficientBuffer() {
        let header = Generate.progressiveHeader(width: 10_000, height: 10_000, components: 4)
        for options in [DecodingOptions.default, DecodingOptions(targetSize: PixelSize(width: 256, height: 256))] {
            let reason = JPEGTestSupport.decodingReason { () throws(AlcedoError) in try JPEGDecoder().decode(Data(header), options: options) }
            // 1250 x 1250 blocks x 4 components x 64 coefficients x 2 bytes, whatever the DCT scaling.
            #expect(reason == .workingMemoryTooLarge(format: .jpeg, what: "the coefficient buffer of a progressive or multi-scan file",
                                                     bytes: 800_000_000, limit: 256 << 20))
        }
    }

    @Test("the coefficient buffer is counted for small progressive files too, and not for baseline ones")
    func coefficientBufferLimit() throws {
        let progressive = try Fixtures.data("go-image/image-testdata/video-001.q50.420.progressive.jpeg")
        let baseline = try Fixtures.data("go-image/image-testdata/video-001.q50.420.jpeg")
        let tight = DecodingOptions(limits: DecodingLimits(maxWorkingMemory: 50_000))
        let reason = JPEGTestSupport.decodingReason { () throws(AlcedoError) in try JPEGDecoder().decode(progressive, options: tight) }
        // 150x103 in 4:2:0: 20x14 luma blocks (whole MCUs) and 10x7 per chroma component.
        #expect(reason == .workingMemoryTooLarge(format: .jpeg, what: "the coefficient buffer of a progressive or multi-scan file",
                                                 bytes: (20 * 14 + 2 * 10 * 7) * 128, limit: 50_000))
        #expect(try JPEGDecoder().decode(baseline, options: tight).width == 150)
        #expect(try JPEGDecoder().decode(progressive).width == 150)
    }

    // MARK: WebP: a tiny frame on a huge canvas

    @Test("a tiny frame on a 16383x6103 canvas: a thumbnail allocates only the scaled canvas")
    func tinyFrameHugeCanvasThumbnail() throws {
        let data = Generate.tinyFramesOnCanvas(width: 16_383, height: 6_103, offsets: [(0, 0)])
        #expect(data.count < 100)
        let options = DecodingOptions(targetSize: PixelSize(width: 256, height: 256), firstFrameOnly: true)
        let image = try WebPDecoder().decode(data, options: options)
        // 6103 * 256 / 16383 = 95.4, rounded up.
        #expect(image.width == 256 && image.height == 96)
        #expect(image.pixel(x: 0, y: 0) == RGBA(red: 10, green: 20, blue: 30))
        #expect(image.pixel(x: 1, y: 0) == .clear && image.pixel(x: 255, y: 95) == .clear)
    }

    @Test("a whole animation on a huge canvas is counted against the limits before the canvas exists")
    func tinyFramesHugeCanvasLimits() throws {
        let data = Generate.tinyFramesOnCanvas(width: 16_383, height: 6_103, offsets: [(0, 0), (16_380, 6_100)])
        let limits = DecodingLimits(maxTotalBytes: 256 << 20)
        let reason = WebPTestSupport.decodingError { () throws(AlcedoError) in
            try WebPDecoder().decode(data, options: DecodingOptions(limits: limits))
        }
        #expect(reason == .animationTooLarge(format: .webp, bytes: 16_383 * 6_103 * 4 * 2, limit: 256 << 20))
        // The frame buffer is working memory: the largest frame, checked before decoding any.
        let tight = DecodingLimits(maxWorkingMemory: 3)
        let frameReason = WebPTestSupport.decodingError { () throws(AlcedoError) in
            try WebPDecoder().decode(Self.smallCanvas, options: DecodingOptions(limits: tight))
        }
        #expect(frameReason == .workingMemoryTooLarge(format: .webp, what: "the frame buffer of an animation", bytes: 4, limit: 3))
    }

    @Test("tiny frames on a huge canvas with a target size: every frame composited at the scaled size")
    func tinyFramesHugeCanvasScaled() throws {
        let data = Generate.tinyFramesOnCanvas(width: 16_383, height: 6_103, offsets: [(0, 0), (16_380, 6_100), (8_000, 3_000)])
        // Within a 2 MiB budget for all frames: the full canvas (400 MB) is never made.
        let options = DecodingOptions(targetSize: PixelSize(width: 256, height: 256),
                                      limits: DecodingLimits(maxTotalBytes: 2 << 20, maxWorkingMemory: 64))
        let image = try WebPDecoder().decode(data, options: options)
        #expect(image.width == 256 && image.height == 96 && image.frames.count == 3)
        let dot = RGBA(red: 10, green: 20, blue: 30)
        #expect(image.pixel(x: 0, y: 0, frame: 0) == dot && image.pixel(x: 255, y: 95, frame: 0) == .clear)
        #expect(image.pixel(x: 255, y: 95, frame: 1) == dot && image.pixel(x: 0, y: 0, frame: 1) == dot)
        // 8000 * 256 / 16383 = 125.0, 3000 * 96 / 6103 = 47.2.
        #expect(image.pixel(x: 125, y: 47, frame: 2) == dot && image.pixel(x: 125, y: 47, frame: 1) == .clear)
    }

    static let smallCanvas = Generate.tinyFramesOnCanvas(width: 300, height: 200, offsets: [(0, 0), (298, 198), (100, 50)])

    @Test("tiny frames composited on one canvas: each frame keeps the earlier ones (no disposal)")
    func tinyFramesComposited() throws {
        let image = try WebPDecoder().decode(Self.smallCanvas)
        #expect(image.frames.count == 3 && image.width == 300 && image.height == 200)
        let dot = RGBA(red: 10, green: 20, blue: 30)
        #expect(image.pixel(x: 0, y: 0, frame: 0) == dot && image.pixel(x: 298, y: 198, frame: 0) == .clear)
        #expect(image.pixel(x: 0, y: 0, frame: 1) == dot && image.pixel(x: 298, y: 198, frame: 1) == dot)
        #expect(image.pixel(x: 100, y: 50, frame: 2) == dot && image.pixel(x: 100, y: 50, frame: 1) == .clear)
        #expect(image.frames.allSatisfy { $0.pixels.count == 300 * 200 * 4 })
        // The first frame alone, without a target: the full canvas, one frame.
        let first = try WebPDecoder().decode(Self.smallCanvas, options: DecodingOptions(firstFrameOnly: true))
        #expect(first.frames.count == 1 && first.pixels == image.frames[0].pixels)
    }

    // MARK: Processing

    @Test("a resize to 1x100,000,000 is refused for its working memory before any work")
    func extremeResize() {
        let image = Synthetic.solid(.white, width: 4, height: 4)
        let processor = ResizingImageProcessor(referenceSize: PixelSize(width: 1, height: 100_000_000))
        do {
            _ = try processor.process(image)
            Issue.record("the resize was not refused")
        } catch {
            guard case .workingMemoryTooLarge(let name, let size, let bytes, let limit)? = error.processorCause else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(name == "ResizingImageProcessor" && size == PixelSize(width: 1, height: 100_000_000))
            #expect(bytes > limit && limit == DecodingLimits.default.maxWorkingMemory)
        }
        // An ordinary enlargement is within the limit.
        #expect(ResamplerPlan.workingMemory(from: PixelSize(width: 4_000, height: 3_000),
                                            to: PixelSize(width: 10_000, height: 10_000)) < 16 << 20)
    }

    /// A picture with edges, gradients and transparency, to compare blurs on.
    static let pattern = Synthetic.image(width: 150, height: 110) { x, y in
        if (x / 25 + y / 25) % 2 == 0 { return RGBA(red: UInt8(x), green: UInt8(2 * y), blue: 200, alpha: 255) }
        return RGBA(red: 250, green: 40, blue: UInt8((x + y) % 256), alpha: UInt8(x < 75 ? 255 : 90))
    }

    @Test("a large radius blurs through a smaller picture, within 1 level on average of the exact Gaussian", arguments: [6.0, 9.0, 16.0, 24.0])
    func largeBlurMatchesGaussian(_ sigma: Double) throws {
        let image = Self.pattern
        let blurred = try BlurImageProcessor(blurRadius: sigma).process(image)
        let exact = GaussianKernel(sigma: sigma, longestSide: 150).blur(image.pixels, width: 150, height: 110)
        // Compared premultiplied (colour times alpha, what is seen): the straight colour of a
        // nearly transparent pixel is not. The mean stays under a level; the worst pixels (up to
        // about 25 levels, measured) are at the picture's edges, where the reduced picture's
        // partial boxes and the exact kernel's edge clamp differ.
        var worst = 0.0, total = 0.0
        for index in stride(from: 0, to: exact.count, by: 4) {
            let alphaA = Double(blurred.pixels[index + 3]), alphaB = Double(exact[index + 3])
            for channel in 0..<4 {
                let a = channel == 3 ? alphaA : Double(blurred.pixels[index + channel]) * alphaA / 255
                let b = channel == 3 ? alphaB : Double(exact[index + channel]) * alphaB / 255
                worst = max(worst, abs(a - b))
                total += abs(a - b)
            }
        }
        let mean = total / Double(exact.count)
        #expect(worst <= 32 && mean <= 1, "σ \(sigma): worst \(worst), mean \(mean)")
    }

    @Test("the work of a large blur does not grow with the radius: the exact kernel runs on a reduced picture with σ ≈ 3")
    func largeBlurCost() {
        for sigma in [6.0, 11.9, 20.0, 200.0, 250.0] {
            let scaled = ScaledGaussianBlur(sigma: sigma, longestSide: 10_000)
            #expect(scaled.reducedSigma >= 2.9 && scaled.reducedSigma <= 4, "σ \(sigma): σ' \(scaled.reducedSigma)")
            // The variances add up: box k²−1 over 12, bilinear k² over 6, the reduced blur (kσ')².
            let k = Double(scaled.factor)
            let variance = (k * k - 1) / 12 + k * k / 6 + pow(k * scaled.reducedSigma, 2)
            #expect(abs(variance - sigma * sigma) <= 1 / 12 + 1e-9)
        }
    }
}
