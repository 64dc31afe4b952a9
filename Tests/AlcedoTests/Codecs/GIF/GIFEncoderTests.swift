import Foundation
import Testing
@testable import Alcedo

@Suite("GIF encoder")
struct GIFEncoderTests {
    /// Pixels drawn from `colors` distinct colours (deterministic), with every `transparentEvery`-th
    /// pixel transparent black when given.
    static func pixels(width: Int, height: Int, colors: Int, seed: UInt64, transparentEvery: Int? = nil) -> [UInt8] {
        var generator = SeededRandom(seed: seed)
        let palette: [[UInt8]] = (0..<colors).map { _ in
            let value = generator.next()
            return [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value >> 16)]
        }
        var out: [UInt8] = []
        for pixel in 0..<(width * height) {
            if let every = transparentEvery, pixel % every == 0 {
                out += [0, 0, 0, 0]
            } else {
                out += palette[pixel < colors ? pixel : Int(generator.next() % UInt64(colors))] + [255]
            }
        }
        return out
    }

    static func roundTrip(_ image: AlcedoImage) throws -> AlcedoImage {
        try GIFDecoder().decode(GIFEncoder().encode(image, options: .default), options: .default)
    }

    @Test(arguments: [(2, nil), (200, nil), (255, 5), (256, nil)] as [(Int, Int?)])
    func upTo256ColoursRoundTripExactly(colors: Int, transparentEvery: Int?) throws {
        let pixels = Self.pixels(width: 40, height: 30, colors: colors, seed: UInt64(colors), transparentEvery: transparentEvery)
        let decoded = try Self.roundTrip(AlcedoImage(width: 40, height: 30, pixels: pixels))
        #expect(decoded.width == 40 && decoded.height == 30 && decoded.frames.count == 1)
        let same = decoded.pixels == pixels
        #expect(same)
    }

    /// Alpha below 128 is transparent, from 128 up is opaque.
    @Test func alphaIsThresholdedAt128() throws {
        let pixels: [UInt8] = [10, 20, 30, 127, 10, 20, 30, 128, 200, 0, 0, 0, 0, 0, 200, 255]
        let decoded = try Self.roundTrip(AlcedoImage(width: 4, height: 1, pixels: pixels))
        #expect(decoded.pixels == [0, 0, 0, 0, 10, 20, 30, 255, 0, 0, 0, 0, 0, 0, 200, 255])
    }

    /// A photograph is quantised to 256 colours by median cut. The palette weighs the channels
    /// by their share of luma, and every pixel gets its nearest entry: on Go's `video-001.png`,
    /// measured 42.4 dB of luma PSNR and 36.9 dB over R, G and B (Go's own 256-colour GIF of it
    /// measures 34.5 dB over R, G and B; unweighted and mapped by cell, Alcedo's measured 40.7
    /// and 37.5 dB).
    @Test func photoIsQuantisedWithinPSNR() throws {
        let photo = try PNGDecoder().decode(Fixtures.data("go-image/image-testdata/video-001.png"), options: .default)
        let decoded = try Self.roundTrip(photo)
        let psnr = gifColorPSNR(decoded.pixels, photo.pixels)
        #expect(psnr >= 36.5)
        let lumaPSNR = PixelCompare.psnr(Self.luma(decoded.pixels), Self.luma(photo.pixels))
        #expect(lumaPSNR >= 41.5)
        #expect(!decoded.hasAlpha)
    }

    /// The per-cell candidate lists give every colour its nearest entry, exactly as a search
    /// of the whole palette does (ties may pick either of the equals): random palettes of 2, 17
    /// and 256 entries, and every colour of a 64-level-per-channel grid plus random colours.
    @Test(arguments: [2, 17, 256])
    func nearestColourIsExact(entries: Int) {
        var generator = SeededRandom(seed: UInt64(entries))
        func channel() -> Double { Double(generator.next() % 25_600) / 100 }
        let palette = (0..<entries).map { _ in GIFColorQuantizer.Color(red: channel(), green: channel(), blue: channel()) }
        var mapper = GIFColorQuantizer.NearestColor(palette: palette)
        var colors: [(UInt8, UInt8, UInt8)] = []
        for red in stride(from: 0, to: 256, by: 4) {
            for green in stride(from: 1, to: 256, by: 4) {
                for blue in stride(from: 3, to: 256, by: 12) { colors.append((UInt8(red), UInt8(green), UInt8(blue))) }
            }
        }
        for _ in 0..<20_000 {
            let value = generator.next()
            colors.append((UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value >> 16)))
        }
        var wrong = 0
        for (red, green, blue) in colors {
            let color = GIFColorQuantizer.Color(red: Double(red), green: Double(green), blue: Double(blue))
            let best = palette.map { color.distance(to: $0) }.min() ?? 0
            let chosen = color.distance(to: palette[Int(mapper.index(red: red, green: green, blue: blue))])
            if chosen > best + 1e-9 { wrong += 1 }
        }
        #expect(wrong == 0)
    }

    /// Rec. 601 luma of RGBA8 pixels, rounded to bytes.
    static func luma(_ rgba: [UInt8]) -> [UInt8] {
        var result = [UInt8]()
        result.reserveCapacity(rgba.count / 4)
        for index in stride(from: 0, to: rgba.count, by: 4) {
            let red = 0.299 * Double(rgba[index])
            let green = 0.587 * Double(rgba[index + 1])
            let blue = 0.114 * Double(rgba[index + 2])
            result.append(UInt8((red + green + blue).rounded()))
        }
        return result
    }

    @Test func quantisedImageWithTransparencyKeepsItsTransparentPixels() throws {
        var pixels = Self.pixels(width: 64, height: 64, colors: 4000, seed: 9)
        for pixel in stride(from: 0, to: 64 * 64, by: 3) { pixels.replaceSubrange(pixel * 4..<pixel * 4 + 4, with: [0, 0, 0, 0]) }
        let decoded = try Self.roundTrip(AlcedoImage(width: 64, height: 64, pixels: pixels))
        for pixel in 0..<(64 * 64) {
            guard (pixels[pixel * 4 + 3] == 0) == (decoded.pixels[pixel * 4 + 3] == 0) else {
                Issue.record("pixel \(pixel) changed transparency")
                return
            }
        }
        #expect(gifColorPSNR(decoded.pixels, pixels) > 20)
    }

    @Test func animationRoundTripsFramesDurationsAndLoopCount() throws {
        // Frame 2 has transparent pixels over an opaque frame 1: frame 1 must be disposed so
        // that they decode transparent; frames 3 and 4 use more colours together than one
        // palette holds, so each gets its own.
        let frames: [AlcedoImage.Frame] = [
            .init(pixels: Self.pixels(width: 16, height: 8, colors: 3, seed: 1), duration: 0.05),
            .init(pixels: Self.pixels(width: 16, height: 8, colors: 3, seed: 2, transparentEvery: 3), duration: 0.5),
            .init(pixels: Self.pixels(width: 16, height: 8, colors: 120, seed: 3), duration: 1.27),
            .init(pixels: Self.pixels(width: 16, height: 8, colors: 120, seed: 4), duration: 0.123),
        ]
        let image = AlcedoImage(width: 16, height: 8, frames: frames, loopCount: 3)
        let decoded = try Self.roundTrip(image)
        #expect(decoded.frames.count == 4)
        for index in 0..<4 {
            let same = decoded.frames[index].pixels == frames[index].pixels
            #expect(same, "frame \(index)")
        }
        #expect(decoded.frames.map(\.duration) == [0.05, 0.5, 1.27, 0.12])
        #expect(decoded.loopCount == 3)
    }

    @Test(arguments: [0, 1, 2, 7, 65_536])
    func loopCountRoundTrips(plays: Int) throws {
        let frames = [AlcedoImage.Frame(pixels: [255, 0, 0, 255], duration: 0.2), AlcedoImage.Frame(pixels: [0, 0, 255, 255], duration: 0.2)]
        let gif = try GIFEncoder().encode(AlcedoImage(width: 1, height: 1, frames: frames, loopCount: plays), options: .default)
        #expect(try GIFDecoder().decode(gif, options: .default).loopCount == plays)
        // Playing once needs no NETSCAPE2.0 extension.
        #expect(gif.range(of: Data("NETSCAPE2.0".utf8)) == nil || plays != 1)
    }

    @Test func stillImageHasNoAnimationExtensions() throws {
        let gif = try GIFEncoder().encode(AlcedoImage(width: 1, height: 1, pixels: [1, 2, 3, 255]), options: .default)
        #expect(gif.range(of: Data("NETSCAPE2.0".utf8)) == nil)
        #expect(gif.prefix(6) == Data("GIF89a".utf8))
        let decoded = try GIFDecoder().decode(gif, options: .default)
        #expect(decoded.pixels == [1, 2, 3, 255] && decoded.loopCount == 0)
    }

    @Test func oversizedImageIsNotEncodable() {
        let image = AlcedoImage(width: 70_000, height: 1, pixels: [UInt8](repeating: 255, count: 70_000 * 4))
        #expect(throws: AlcedoError.self) { try GIFEncoder().encode(image, options: .default) }
        do {
            _ = try GIFEncoder().encode(image, options: .default)
        } catch {
            guard case .encodingFailed(.imageNotEncodable(let format, _))? = error.processorCause else { Issue.record("\(error)"); return }
            #expect(format == .gif)
        }
    }

    @Test func quantiserKeepsExactPalettesExact() {
        let pixels = Self.pixels(width: 20, height: 20, colors: 256, seed: 5)
        let result = GIFColorQuantizer.quantize(pixels)
        #expect(result.colorCount == 256 && result.transparentIndex == nil)
        for pixel in 0..<400 {
            let index = Int(result.indices[pixel])
            #expect(Array(result.palette[index * 3..<index * 3 + 3]) == Array(pixels[pixel * 4..<pixel * 4 + 3]))
        }
        // One more colour: median cut, 256 entries at most.
        let more = Self.pixels(width: 20, height: 20, colors: 257, seed: 5)
        #expect(GIFColorQuantizer.quantize(more).colorCount <= 256)
        #expect(GIFColorQuantizer.quantize(more, maxColors: 16).colorCount <= 16)
    }
}
