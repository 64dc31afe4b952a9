import Foundation
import Testing
@testable import Alcedo

@Suite("WebP encoder")
struct WebPEncoderTests {
    let encoder = WebPEncoder()
    let decoder = WebPDecoder()

    /// A 64x48 picture with smooth ramps, a hard-edged disc and, with `alpha`, an alpha ramp
    /// and a fully transparent corner whose colour is not black.
    static func picture(alpha: Bool, seed: Int = 0) -> AlcedoImage {
        let width = 64, height = 48
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                let dx = x - 40 + seed, dy = y - 20
                let inDisc = dx * dx + dy * dy < 100
                pixels[i] = UInt8(truncatingIfNeeded: x * 4 + seed * 16)
                pixels[i + 1] = inDisc ? 230 : UInt8(y * 5)
                pixels[i + 2] = inDisc ? 40 : UInt8(255 - x * 3)
                pixels[i + 3] = alpha ? (x < 8 && y < 8 ? 0 : UInt8(255 - y * 2)) : 255
            }
        }
        return AlcedoImage(width: width, height: height, pixels: pixels)
    }

    /// The lossless coder's working memory is bounded before libwebp allocates: a picture
    /// with transparency (lossy) or any lossless picture over the bound is refused with a
    /// message naming the need and the limit; an opaque lossy picture has no such bound.
    @Test func losslessWorkingMemoryIsBounded() throws {
        let bound = 64 * 48 * 6  // between the alpha coder's 6.5 bytes a pixel and nothing
        let small = WebPEncoder(maxWorkingMemory: bound)
        #expect(throws: Never.self) { try small.encode(Self.picture(alpha: false)) }
        for (alpha, lossless) in [(true, false), (false, true)] {
            do {
                _ = try small.encode(Self.picture(alpha: alpha), options: EncodingOptions(lossless: lossless))
                Issue.record("not refused (alpha \(alpha), lossless \(lossless))")
            } catch {
                guard case .encodingFailed(.imageNotEncodable(.webp, let message))? = error.processorCause else {
                    Issue.record("unexpected \(error)")
                    continue
                }
                #expect(message.contains("64x48") && message.contains("limit"), "\(message)")
            }
        }
        // The default bound: 41 MP with transparency, 19 MP lossless, opaque lossy unbounded.
        #expect(WebPEncoder.losslessWorkingMemory(width: 8_000, height: 5_000, lossless: false, hasAlpha: true) <= 256 << 20)
        #expect(WebPEncoder.losslessWorkingMemory(width: 16_383, height: 6_103, lossless: false, hasAlpha: true) > 256 << 20)
        #expect(WebPEncoder.losslessWorkingMemory(width: 16_383, height: 16_383, lossless: false, hasAlpha: false) == 0)
        #expect(WebPEncoder.losslessWorkingMemory(width: 5_000, height: 4_000, lossless: true, hasAlpha: false) > 256 << 20)
        // A lossless animation counts its encoder's canvases: two opaque frames are refused under
        // a bound that lets one through.
        let frames = Self.picture(alpha: false)
        let animation = AlcedoImage(width: 64, height: 48, frames: [.init(pixels: frames.pixels, duration: 0.1),
                                                                    .init(pixels: frames.pixels.enumerated().map { $0.offset % 4 == 3 ? 255 : 255 - $0.element },
                                                                          duration: 0.1)])
        let canvasBound = WebPEncoder(maxWorkingMemory: 64 * 48 * 20)
        #expect(throws: Never.self) { try canvasBound.encode(frames) }
        #expect(throws: AlcedoError.self) { try canvasBound.encode(animation, options: EncodingOptions(lossless: true)) }
        #expect(throws: Never.self) { try WebPEncoder().encode(animation, options: EncodingOptions(lossless: true)) }
        // A lossy animation counts each frame encoded at a time: refused one byte under its need.
        let need = Self.lossyAnimationNeed(method: 4)
        #expect(throws: AlcedoError.self) { try WebPEncoder(maxWorkingMemory: need - 1).encode(animation) }
        #expect(throws: Never.self) { try WebPEncoder(maxWorkingMemory: need).encode(animation) }
        // Per frame at a time: 17.5 bytes a pixel at method 4, 4 at method 2, 6.5 more with transparency.
        #expect(WebPEncoder.lossyAnimationWorkingMemory(width: 100, height: 100, method: 4, hasAlpha: false, workers: 1) == 175_000)
        #expect(WebPEncoder.lossyAnimationWorkingMemory(width: 100, height: 100, method: 2, hasAlpha: true, workers: 2) == 210_000)
    }

    /// The lossy animation working memory of the two 64x48 opaque frames above.
    static func lossyAnimationNeed(method: Int) -> Int {
        WebPEncoder.lossyAnimationWorkingMemory(width: 64, height: 48, method: method, hasAlpha: false,
                                                workers: WebPEncoder.frameWorkers(frameCount: 2))
    }

    /// Large lossy pictures give up libwebp's token buffer (up to 15 bytes a pixel).
    @Test func largeLossyPicturesUseAOnePassMethod() {
        #expect(WebPEncoder.lossyMethod(4, width: 4_000, height: 4_000) == 4)
        #expect(WebPEncoder.lossyMethod(6, width: 5_000, height: 4_000) == 2)
        #expect(WebPEncoder.lossyMethod(1, width: 5_000, height: 4_000) == 1)
    }

    static func alphaChannel(_ pixels: [UInt8]) -> [UInt8] {
        stride(from: 3, to: pixels.count, by: 4).map { pixels[$0] }
    }

    /// libwebp's reference decode of test.webp: a 128x128 photograph, opaque.
    static func photo() throws -> AlcedoImage {
        let ppm = try PPMImage(data: try Fixtures.data("libwebp/test_ref.ppm"))
        var pixels = [UInt8]()
        pixels.reserveCapacity(ppm.width * ppm.height * 4)
        for i in stride(from: 0, to: ppm.rgb.count, by: 3) { pixels += [ppm.rgb[i], ppm.rgb[i + 1], ppm.rgb[i + 2], 255] }
        return AlcedoImage(width: ppm.width, height: ppm.height, pixels: pixels)
    }

    @Test("lossy round trip of a photograph at quality 90 stays above 38 dB")
    func lossyRoundTrip() throws {
        let source = try Self.photo()
        let data = try encoder.encode(source, options: EncodingOptions(quality: 90))
        #expect(ImageFormat.webPVariant(of: data) == .lossy)
        let decoded = try decoder.decode(data)
        #expect(decoded.width == 128 && decoded.height == 128)
        // cwebp -q 90 on the same picture measures 42.3 dB (libwebp 1.2.4); a broken channel
        // order, offset or quality mapping falls far below.
        #expect(PixelCompare.psnr(decoded.pixels, source.pixels) > 38)
    }

    @Test("lossy keeps the alpha channel exactly")
    func lossyAlpha() throws {
        let source = Self.picture(alpha: true)
        let data = try encoder.encode(source, options: EncodingOptions(quality: 90))
        #expect(ImageFormat.webPVariant(of: data) == .extended)
        let decoded = try decoder.decode(data)
        #expect(WebPTestSupport.differences(Self.alphaChannel(decoded.pixels), Self.alphaChannel(source.pixels), bytesPerPixel: 1) == 0)
    }

    @Test("lossless round trip is exact, alpha and invisible colours included")
    func losslessRoundTrip() throws {
        let source = Self.picture(alpha: true)
        let data = try encoder.encode(source, options: EncodingOptions(lossless: true))
        #expect(ImageFormat.webPVariant(of: data) == .lossless)
        let decoded = try decoder.decode(data)
        #expect(WebPTestSupport.differences(decoded.pixels, source.pixels) == 0)
        #expect(decoded.pixel(x: 0, y: 0) == source.pixel(x: 0, y: 0) && decoded.pixel(x: 0, y: 0).alpha == 0)
    }

    /// PSNR of `method`'s lossy encoding of the photograph at quality 90, and its bytes.
    static func methodRoundTrip(_ method: Int) throws -> (psnr: Double, data: Data) {
        let source = try photo()
        let data = try WebPEncoder(method: method).encode(source, options: EncodingOptions(quality: 90))
        let decoded = try WebPDecoder().decode(data)
        return (PixelCompare.psnr(decoded.pixels, source.pixels), data)
    }

    @Test("every method 0...6 round-trips a photograph above 38 dB; the method is used as given and clamped to 0...6")
    func methodsRoundTrip() throws {
        var outputs = Set<Data>()
        for method in 0...6 {
            let (psnr, data) = try Self.methodRoundTrip(method)
            #expect(ImageFormat.webPVariant(of: data) == .lossy)
            #expect(psnr > 38, "method \(method): \(psnr) dB")
            outputs.insert(data)
        }
        // Methods 0-2 skip the rate-distortion passes that 3-6 make: the files differ.
        #expect(outputs.count >= 4, "\(outputs.count) distinct files from 7 methods")
        #expect(try Self.methodRoundTrip(2).data != Self.methodRoundTrip(4).data)
        #expect(WebPEncoder(method: 9).method == 6)
        #expect(WebPEncoder(method: -3).method == 0)
        #expect(WebPEncoder().method == 4)
    }

    @Test("lower quality gives a smaller file")
    func qualityChangesSize() throws {
        let source = try Self.photo()
        let low = try encoder.encode(source, options: EncodingOptions(quality: 10))
        let high = try encoder.encode(source, options: EncodingOptions(quality: 95))
        #expect(low.count < high.count)
        let lowQuality = try decoder.decode(low)
        let highQuality = try decoder.decode(high)
        #expect(PixelCompare.psnr(lowQuality.pixels, source.pixels) < PixelCompare.psnr(highQuality.pixels, source.pixels))
    }

    @Test("quality outside 1...100 is an error", arguments: [0, -5, 101, 1000])
    func invalidQuality(_ quality: Int) {
        for lossless in [false, true] {
            do {
                _ = try encoder.encode(Self.picture(alpha: false), options: EncodingOptions(quality: quality, lossless: lossless))
                Issue.record("quality \(quality) was accepted")
            } catch {
                guard case .encodingFailed(.invalidQuality(quality))? = error.processorCause else {
                    Issue.record("unexpected error \(error)")
                    return
                }
            }
        }
    }

    @Test("quality 1 and 100 are accepted")
    func qualityBounds() throws {
        for quality in [1, 100] {
            let data = try encoder.encode(Self.picture(alpha: false), options: EncodingOptions(quality: quality))
            #expect(try decoder.decode(data).width == 64)
        }
    }

    @Test("a side over 16383 pixels cannot be encoded")
    func tooLarge() {
        let image = AlcedoImage(width: 16384, height: 1, pixels: [UInt8](repeating: 255, count: 16384 * 4))
        do {
            _ = try encoder.encode(image)
            Issue.record("a 16384-pixel-wide image was encoded")
        } catch {
            guard case .encodingFailed(.imageNotEncodable(.webp, _))? = error.processorCause else {
                Issue.record("unexpected error \(error)")
                return
            }
        }
    }

    static func animation(loopCount: Int) -> AlcedoImage {
        let durations = [0.05, 0.2, 0.12]
        let frames = durations.enumerated().map { index, duration in
            AlcedoImage.Frame(pixels: picture(alpha: true, seed: index * 3).pixels, duration: duration)
        }
        return AlcedoImage(width: 64, height: 48, frames: frames, loopCount: loopCount)
    }

    @Test("lossless animation round trip: frames, pixels, durations, loop count")
    func losslessAnimation() throws {
        let source = Self.animation(loopCount: 2)
        let data = try encoder.encode(source, options: EncodingOptions(lossless: true))
        #expect(ImageFormat.webPVariant(of: data) == .animated)
        let decoded = try decoder.decode(data)
        #expect(decoded.frames.count == 3)
        #expect(decoded.loopCount == 2)
        #expect(decoded.frames.map(\.duration) == [0.05, 0.2, 0.12])
        for (index, frame) in decoded.frames.enumerated() where index < source.frames.count {
            // Exact, the colour of fully transparent pixels included (the encoder runs in exact mode).
            #expect(WebPTestSupport.differences(frame.pixels, source.frames[index].pixels) == 0, "frame \(index + 1)")
        }
        let info = try decoder.info(for: data)
        #expect(info.frameCount == 3 && info.loopCount == 2 && info.frameDurations == [0.05, 0.2, 0.12])
    }

    @Test("lossy animation keeps frames, durations and an infinite loop")
    func lossyAnimation() throws {
        let source = Self.animation(loopCount: 0)
        let data = try encoder.encode(source, options: EncodingOptions(quality: 90))
        let decoded = try decoder.decode(data)
        #expect(decoded.frames.count == 3 && decoded.loopCount == 0)
        #expect(decoded.frames.map(\.duration) == [0.05, 0.2, 0.12])
        for (index, frame) in decoded.frames.enumerated() where index < source.frames.count {
            #expect(WebPTestSupport.differences(Self.alphaChannel(frame.pixels), Self.alphaChannel(source.frames[index].pixels), bytesPerPixel: 1) == 0,
                    "frame \(index + 1) alpha")
        }
    }

    @Test("identical consecutive frames are merged, their durations added")
    func identicalFramesMerge() throws {
        let first = Self.picture(alpha: false).pixels
        let second = Self.picture(alpha: false, seed: 2).pixels
        let frames = [AlcedoImage.Frame(pixels: first, duration: 0.1), AlcedoImage.Frame(pixels: first, duration: 0.25),
                      AlcedoImage.Frame(pixels: second, duration: 0.3)]
        let data = try encoder.encode(AlcedoImage(width: 64, height: 48, frames: frames), options: EncodingOptions(lossless: true))
        let decoded = try decoder.decode(data)
        #expect(decoded.frames.map(\.duration) == [0.35, 0.3])
        #expect(decoded.frames.count == 2 && WebPTestSupport.differences(decoded.frames[1].pixels, second) == 0)
    }

    @Test("a one-frame image is written as a still image")
    func singleFrame() throws {
        let frame = AlcedoImage.Frame(pixels: Self.picture(alpha: false).pixels, duration: 0.5)
        let image = AlcedoImage(width: 64, height: 48, frames: [frame], loopCount: 4)
        let data = try encoder.encode(image, options: EncodingOptions(lossless: true))
        #expect(ImageFormat.webPVariant(of: data) == .lossless)
        #expect(WebPTestSupport.differences(try decoder.decode(data).pixels, frame.pixels) == 0)
    }

    @Test("every content preset writes a lossy file of the picture; presets change the bytes; names read as imgproxy writes them")
    func presets() throws {
        var pixels = [UInt8]()
        for y in 0..<96 { for x in 0..<128 { pixels += [UInt8(x * 2), UInt8(y * 2), UInt8((x * y) % 256), 255] } }
        let image = AlcedoImage(width: 128, height: 96, pixels: pixels)
        var outputs = Set<Data>()
        for preset in WebPEncoder.Preset.allCases {
            let data = try WebPEncoder(preset: preset).encode(image, options: EncodingOptions(quality: 75))
            let decoded = try WebPDecoder().decode(data, options: .default)
            #expect(decoded.width == 128 && decoded.height == 96)
            outputs.insert(data)
            #expect(WebPEncoder.Preset(name: "\(preset)") == preset)
        }
        #expect(outputs.count >= 3, "\(outputs.count) distinct files from 6 presets")
        #expect(WebPEncoder.Preset(name: "PHOTO") == .photo)
        #expect(WebPEncoder.Preset(name: "poster") == nil)
    }
}
