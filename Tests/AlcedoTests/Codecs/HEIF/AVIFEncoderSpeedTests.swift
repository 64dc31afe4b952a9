import Alcedo
import Testing

/// Every encoder speed writes stills and animations (libaom 3.6 crashed the process on
/// sequences at speed 7).
@Suite("AVIFEncoder speeds")
struct AVIFEncoderSpeedTests {
    static func animation() -> AlcedoImage {
        var first = [UInt8](repeating: 255, count: 32 * 24 * 4), second = first
        for index in stride(from: 0, to: first.count, by: 4) {
            first[index] = UInt8(truncatingIfNeeded: index * 7)
            second[index + 1] = UInt8(truncatingIfNeeded: index * 5)
        }
        return AlcedoImage(width: 32, height: 24, frames: [.init(pixels: first, duration: 0.1), .init(pixels: second, duration: 0.1)])
    }

    @Test(arguments: [6, 7, 8, 9, 10])
    func animationsAtEverySpeed(_ speed: Int) throws {
        let data = try AVIFEncoder(speed: speed).encode(Self.animation(), options: EncodingOptions(quality: 63))
        let decoded = try ImageCodecRegistry.shared.decode(data)
        #expect(decoded.frames.count == 2 && decoded.pixelSize == PixelSize(width: 32, height: 24))
        let still = try AVIFEncoder(speed: speed).encode(Self.animation().frame(at: 0), options: EncodingOptions(quality: 63))
        #expect(try ImageCodecRegistry.shared.decode(still).frames.count == 1)
    }
}
