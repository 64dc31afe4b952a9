import Foundation
import Testing
@testable import Alcedo

@Suite("WebP decoder: hostile input")
struct WebPHostileInputTests {
    let decoder = WebPDecoder()
    static let smallFiles = ["lossless-alpha.webp", "lossy-alpha.webp", "animated.webp"]
    /// Tight limits for mutated files, so that a flipped size bit cannot make a test slow:
    /// the limits are what stands between a hostile header and a big allocation.
    static let tightLimits = DecodingLimits(maxPixelCount: 1 << 20, maxFrameCount: 16, maxTotalBytes: 16 << 20)

    /// A 1x1 lossless `VP8L` chunk (made by cwebp -lossless), padding byte included.
    static let tinyVP8L: [UInt8] = [
        0x56, 0x50, 0x38, 0x4C, 0x11, 0x00, 0x00, 0x00, 0x2F, 0x00, 0x00, 0x00, 0x00, 0x07, 0x50, 0x8A,
        0x2A, 0xD4, 0xA3, 0xFF, 0x81, 0x88, 0xE8, 0x7F, 0x00, 0x00,
    ]

    static func le(_ value: Int, bytes: Int) -> [UInt8] {
        (0..<bytes).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    static func chunk(_ fourCC: String, _ payload: [UInt8]) -> [UInt8] {
        Array(fourCC.utf8) + le(payload.count, bytes: 4) + payload + (payload.count % 2 == 1 ? [0] : [])
    }

    /// A RIFF WebP file whose `VP8X` chunk states a `width` x `height` canvas, followed by `rest`.
    static func extended(width: Int, height: Int, flags: UInt8, rest: [UInt8]) -> Data {
        let vp8x = chunk("VP8X", [flags, 0, 0, 0] + le(width - 1, bytes: 3) + le(height - 1, bytes: 3))
        let body = Array("WEBP".utf8) + vp8x + rest
        return Data(Array("RIFF".utf8) + le(body.count, bytes: 4) + body)
    }

    /// Decoding `data` either fails with a decoding error or yields an image of sane size.
    func expectNoCrash(_ data: Data, options: DecodingOptions, _ comment: Comment) {
        do {
            let image = try decoder.decode(data, options: options)
            #expect(image.width * image.height <= options.limits.maxPixelCount, comment)
            #expect(image.frames.allSatisfy { $0.pixels.count == image.width * image.height * 4 }, comment)
        } catch {
            guard case .decodingFailed? = error.processorCause else {
                Issue.record("\(comment): not a decoding error: \(error)")
                return
            }
        }
        do {
            _ = try decoder.info(for: data)
        } catch {
            guard case .decodingFailed? = error.processorCause else {
                Issue.record("\(comment): info: not a decoding error: \(error)")
                return
            }
        }
    }

    @Test("empty data")
    func empty() {
        #expect(WebPTestSupport.decodingError { () throws(AlcedoError) in try decoder.decode(Data()) } == .emptyData)
        #expect(WebPTestSupport.decodingError { () throws(AlcedoError) in try decoder.info(for: Data()) } == .emptyData)
    }

    @Test("1 to 3 bytes: the start of a signature is truncated, anything else is not WebP",
          arguments: [[0x52], [0x52, 0x49], [0x52, 0x49, 0x46], [0x00], [0x89, 0x50, 0x4E], [0xFF, 0xD8, 0xFF]] as [[UInt8]])
    func tiny(bytes: [UInt8]) {
        let reason = WebPTestSupport.decodingError { () throws(AlcedoError) in try decoder.decode(Data(bytes)) }
        if bytes.first == 0x52 {
            #expect(Self.isTruncated(reason), "\(String(describing: reason))")
        } else {
            #expect(Self.isInvalidHeader(reason), "\(String(describing: reason))")
        }
    }

    @Test("RIFF....WEBP with no chunk")
    func noChunk() {
        for size in [4, 0, 100, 0xFFFF_FFFF] {
            let data = Data(Array("RIFF".utf8) + Self.le(size, bytes: 4) + Array("WEBP".utf8))
            let reason = WebPTestSupport.decodingError { () throws(AlcedoError) in try decoder.decode(data) }
            #expect(reason != nil, "RIFF size \(size)")
            _ = WebPTestSupport.decodingError { () throws(AlcedoError) in try decoder.info(for: data) }
        }
    }

    @Test("another format's bytes are not WebP")
    func otherFormat() throws {
        let jpeg = try Fixtures.data("libjpeg-turbo/testorig.jpg")
        let reason = WebPTestSupport.decodingError { () throws(AlcedoError) in try decoder.decode(jpeg) }
        #expect(Self.isInvalidHeader(reason), "\(String(describing: reason))")
    }

    @Test("every prefix of the small files is truncated", arguments: smallFiles)
    func prefixes(name: String) throws {
        let data = try WebPTestSupport.generated(name)
        for length in 1..<data.count {
            let prefix = data.prefix(length)
            let reason = WebPTestSupport.decodingError { () throws(AlcedoError) in try decoder.decode(prefix) }
            #expect(Self.isTruncated(reason), "\(name) cut to \(length) bytes: \(String(describing: reason))")
            expectNoCrash(prefix, options: DecodingOptions(allowTruncated: true, limits: Self.tightLimits), "\(name) cut to \(length)")
        }
    }

    @Test("prefixes of test.webp are truncated, and give rows with allowTruncated")
    func lossyPrefixes() throws {
        let data = try Fixtures.data("libwebp/test.webp")
        for length in stride(from: 30, to: data.count, by: 97) {
            let prefix = data.prefix(length)
            let reason = WebPTestSupport.decodingError { () throws(AlcedoError) in try decoder.decode(prefix) }
            #expect(Self.isTruncated(reason), "test.webp cut to \(length): \(String(describing: reason))")
            expectNoCrash(prefix, options: DecodingOptions(allowTruncated: true), "test.webp cut to \(length)")
        }
    }

    @Test("bit flips at every offset of the small files", arguments: smallFiles)
    func bitFlips(name: String) throws {
        let data = try WebPTestSupport.generated(name)
        for offset in 0..<data.count {
            for bit in [offset % 8, 7 - offset % 8] {
                var mutated = data
                mutated[offset] ^= UInt8(1 << bit)
                expectNoCrash(mutated, options: DecodingOptions(limits: Self.tightLimits), "\(name) bit \(bit) at \(offset)")
            }
        }
    }

    @Test("bit flips across test.webp")
    func lossyBitFlips() throws {
        let data = try Fixtures.data("libwebp/test.webp")
        for offset in stride(from: 0, to: data.count, by: 11) {
            var mutated = data
            mutated[offset] ^= UInt8(1 << (offset % 8))
            expectNoCrash(mutated, options: DecodingOptions(limits: Self.tightLimits), "test.webp bit \(offset % 8) at \(offset)")
        }
    }

    static func isInvalidHeader(_ reason: DecodingErrorReason?) -> Bool {
        if case .invalidHeader(.webp, _) = reason { return true }
        return false
    }

    static func isTruncated(_ reason: DecodingErrorReason?) -> Bool {
        if case .truncated(.webp, _) = reason { return true }
        return false
    }

    @Test("a 16383x16383 VP8X canvas with tiny data is refused before any allocation")
    func hugeCanvas() {
        let animationHeader = Self.chunk("ANIM", [0, 0, 0, 0, 0, 0])
        let frame = Self.chunk("ANMF", Self.le(0, bytes: 6) + Self.le(0, bytes: 6) + Self.le(100, bytes: 3) + [0] + Self.tinyVP8L)
        let animated = Self.extended(width: 16383, height: 16383, flags: 0x12, rest: animationHeader + frame)
        // Default limits: 16383 x 16383 is over 100 MP, refused from the header.
        let reason = WebPTestSupport.decodingError { () throws(AlcedoError) in try decoder.decode(animated) }
        #expect(reason == .tooManyPixels(format: .webp, width: 16383, height: 16383, limit: DecodingLimits.default.maxPixelCount))
        #expect((try? decoder.info(for: animated))?.frameCount == 1)

        // Without any limit, the header's lies are still found before a canvas is allocated:
        // a still canvas that differs from its 1x1 picture, an animation without frames, a
        // still image without an image chunk.
        let unlimited = DecodingOptions(limits: DecodingLimits(maxPixelCount: .max, maxFrameCount: .max, maxTotalBytes: .max))
        let cases: [(String, Data)] = [
            ("canvas larger than its picture", Self.extended(width: 16383, height: 16383, flags: 0x10, rest: Self.tinyVP8L)),
            ("animation without frames", Self.extended(width: 16383, height: 16383, flags: 0x12, rest: animationHeader)),
            ("no image chunk", Self.extended(width: 16383, height: 16383, flags: 0x10, rest: [])),
        ]
        for (name, data) in cases {
            for options in [DecodingOptions.default, unlimited] {
                let reason = WebPTestSupport.decodingError { () throws(AlcedoError) in try decoder.decode(data, options: options) }
                #expect(Self.isInvalidHeader(reason), "\(name): \(String(describing: reason))")
            }
        }
    }

    @Test("an animation with more frames than the limits allow")
    func tooManyFrames() throws {
        let animationHeader = Self.chunk("ANIM", [0, 0, 0, 0, 0, 0])
        let frame = Self.chunk("ANMF", Self.le(0, bytes: 6) + Self.le(0, bytes: 6) + Self.le(20, bytes: 3) + [0] + Self.tinyVP8L)
        let data = Self.extended(width: 1, height: 1, flags: 0x12, rest: animationHeader + Array(repeating: frame, count: 50).flatMap { $0 })
        let options = DecodingOptions(limits: DecodingLimits(maxFrameCount: 10))
        let reason = WebPTestSupport.decodingError { () throws(AlcedoError) in try decoder.decode(data, options: options) }
        #expect(reason == .tooManyFrames(format: .webp, count: 50, limit: 10))
        // Within the default limits the same file decodes: 50 frames of one pixel.
        let image = try decoder.decode(data)
        #expect(image.frames.count == 50 && image.pixel(x: 0, y: 0, frame: 49) == RGBA(red: 10, green: 20, blue: 30))
    }
}
