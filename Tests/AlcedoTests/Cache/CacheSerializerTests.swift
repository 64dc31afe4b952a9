import Foundation
import Testing
@testable import Alcedo

@Suite("CacheSerializer")
struct CacheSerializerTests {
    static let shared = ImageCodecRegistry.shared
    static func canEncode(_ format: ImageFormat) -> Bool { shared.encoder(for: format) != nil && shared.decoder(for: format) != nil }

    @Test func defaultStoresTheOriginalBytes() throws {
        let serializer = DefaultCacheSerializer(codecs: BMPTestCodec.registry())
        let original = Data("exactly as downloaded".utf8)
        #expect(try serializer.serializedData(with: .testPattern(), original: original) == original)
    }

    @Test func defaultEncodesInTheImagesOwnFormat() throws {
        let serializer = DefaultCacheSerializer(codecs: BMPTestCodec.registry())
        let image = AlcedoImage.testPattern(format: .bmp)
        let data = try serializer.serializedData(with: image, original: nil)
        #expect(ImageFormat.sniff(data) == .bmp)
        #expect(try serializer.deserializedImage(with: data, options: .default).pixels == image.pixels)
    }

    @Test func defaultFallsBackToPNGForFormatsItCannotWrite() throws {
        // With only the bitmap codec there is no PNG encoder either: the error names PNG.
        let serializer = DefaultCacheSerializer(codecs: BMPTestCodec.registry())
        #expect(throws: AlcedoError.self) { _ = try serializer.serializedData(with: .testPattern(format: .tiff), original: nil) }
        do {
            _ = try serializer.serializedData(with: .testPattern(format: .tiff), original: nil)
        } catch {
            guard case .encodingFailed(.unsupportedFormat(.png))? = error.processorCause else {
                Issue.record("expected the PNG fallback, got \(error)")
                return
            }
        }
    }

    @Test(.enabled(if: canEncode(.png), "needs the PNG codec"))
    func defaultWritesPNGForAnUnknownFormat() throws {
        // SVG is read, never written.
        let image = AlcedoImage.testPattern(format: .svg)
        let data = try DefaultCacheSerializer.default.serializedData(with: image, original: nil)
        #expect(ImageFormat.sniff(data) == .png)
        #expect(try DefaultCacheSerializer.default.deserializedImage(with: data, options: .default).pixels == image.pixels)
    }

    @Test(.enabled(if: canEncode(.jpeg), "needs the JPEG codec"))
    func defaultReencodesInTheOriginalsFormatWhenAsked() throws {
        let original = try Fixtures.data("libjpeg-turbo/testorig.jpg")
        let image = try Self.shared.decode(original)
        let serializer = DefaultCacheSerializer(preferCacheOriginalData: false)
        let data = try serializer.serializedData(with: image, original: original)
        #expect(ImageFormat.sniff(data) == .jpeg)
        #expect(data != original)
        #expect(try serializer.deserializedImage(with: data, options: .default).pixelSize == image.pixelSize)
    }

    @Test(.enabled(if: canEncode(.png), "needs the PNG codec"))
    func formatIndicatedPNGIsLossless() throws {
        let image = AlcedoImage.testPattern(width: 16, height: 9, seed: 5)
        let data = try FormatIndicatedCacheSerializer.png.serializedData(with: image, original: Data("ignored".utf8))
        #expect(ImageFormat.sniff(data) == .png)
        #expect(try FormatIndicatedCacheSerializer.png.deserializedImage(with: data, options: .default).pixels == image.pixels)
    }

    @Test(.enabled(if: canEncode(.jpeg), "needs the JPEG codec"))
    func formatIndicatedJPEGHonoursQuality() throws {
        let image = try Self.shared.decode(try Fixtures.data("libjpeg-turbo/testorig.jpg"))
        let low = try FormatIndicatedCacheSerializer.jpeg(quality: 20).serializedData(with: image, original: nil)
        let high = try FormatIndicatedCacheSerializer.jpeg(quality: 95).serializedData(with: image, original: nil)
        #expect(ImageFormat.sniff(low) == .jpeg && ImageFormat.sniff(high) == .jpeg)
        #expect(low.count < high.count)
        #expect(try FormatIndicatedCacheSerializer.jpeg.deserializedImage(with: high, options: .default).pixelSize == image.pixelSize)
    }

    @Test(.enabled(if: canEncode(.gif), "needs the GIF codec"))
    func formatIndicatedGIF() throws {
        let image = AlcedoImage.testPattern(width: 10, height: 10)
        let data = try FormatIndicatedCacheSerializer.gif.serializedData(with: image, original: nil)
        #expect(ImageFormat.sniff(data) == .gif)
        #expect(try FormatIndicatedCacheSerializer.gif.deserializedImage(with: data, options: .default).pixelSize == image.pixelSize)
    }

    @Test(.enabled(if: canEncode(.webp), "needs the WebP codec"))
    func formatIndicatedWebP() throws {
        let image = AlcedoImage.testPattern(width: 10, height: 10)
        let lossless = FormatIndicatedCacheSerializer.webp(lossless: true)
        let data = try lossless.serializedData(with: image, original: nil)
        #expect(ImageFormat.sniff(data) == .webp)
        #expect(try lossless.deserializedImage(with: data, options: .default).pixels == image.pixels)
        #expect(ImageFormat.sniff(try FormatIndicatedCacheSerializer.webp.serializedData(with: image, original: nil)) == .webp)
    }

    @Test func formatIndicatedPresets() {
        #expect(FormatIndicatedCacheSerializer.png.format == .png)
        #expect(FormatIndicatedCacheSerializer.jpeg.options.quality == 90)
        #expect(FormatIndicatedCacheSerializer.jpeg(quality: 40).options.quality == 40)
        #expect(FormatIndicatedCacheSerializer.gif.format == .gif)
        #expect(FormatIndicatedCacheSerializer.webp(quality: 70, lossless: true).options == EncodingOptions(quality: 70, lossless: true))
    }

    @Test func missingEncoderIsATypedError() {
        let serializer = FormatIndicatedCacheSerializer(format: .webp, codecs: ImageCodecRegistry(includingBuiltIns: false))
        #expect(throws: AlcedoError.self) { _ = try serializer.serializedData(with: .testPattern(), original: nil) }
    }
}
