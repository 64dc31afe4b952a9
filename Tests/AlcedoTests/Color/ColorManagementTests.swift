import Foundation
import Testing
@testable import Alcedo

/// Helpers for the colour fixtures of `Fixtures/color-generated` (made by its `make.py`).
enum ColorFixtures {
    static func data(_ name: String) throws -> Data { try Fixtures.data("color-generated/\(name)") }

    /// The sRGB reference of `name`: Pillow ImageCms (relative colorimetric + black-point
    /// compensation) of Pillow's decode, stored untagged as `name.srgb.png`.
    static func reference(_ name: String) throws -> AlcedoImage {
        try PNGDecoder().decode(data("\(name).srgb.png"), options: DecodingOptions(colorManagement: .ignore))
    }

    /// The largest difference of any R, G or B sample between two images of the same size.
    static func maxDifference(_ a: AlcedoImage, _ b: AlcedoImage) -> Int {
        precondition(a.width == b.width && a.height == b.height, "sizes differ: \(a.pixelSize) and \(b.pixelSize)")
        var worst = 0
        for index in a.pixels.indices where index % 4 != 3 {
            worst = max(worst, abs(Int(a.pixels[index]) - Int(b.pixels[index])))
        }
        return worst
    }
}

@Suite("Colour management")
struct ColorManagementTests {
    struct Case: Sendable, CustomStringConvertible {
        let file: String
        let description: String
        let colorSpace: ImageColorProfile.ColorSpace
    }

    static let tagged: [Case] = [
        Case(file: "p3.jpg", description: "Display P3 (Alcedo test)", colorSpace: .rgb),
        Case(file: "adobe-rgb.jpg", description: "Adobe RGB (1998) compatible (Alcedo test)", colorSpace: .rgb),
        Case(file: "prophoto.jpg", description: "ProPhoto RGB compatible (Alcedo test)", colorSpace: .rgb),
        Case(file: "gray-18.jpg", description: "Gray gamma 1.8 (Alcedo test)", colorSpace: .gray),
        Case(file: "p3.png", description: "Display P3 (Alcedo test)", colorSpace: .rgb),
        Case(file: "p3.webp", description: "Display P3 (Alcedo test)", colorSpace: .rgb),
        Case(file: "p3.gif", description: "Display P3 (Alcedo test)", colorSpace: .rgb),
        Case(file: "gama-chrm.png", description: "PNG gAMA 0.55556 cHRM", colorSpace: .rgb),
        Case(file: "cmyk-inverted-profile.jpg", description: "Press CMYK with dot gain (Alcedo test)", colorSpace: .cmyk),
        Case(file: "cmyk-plain-profile.jpg", description: "Press CMYK with dot gain (Alcedo test)", colorSpace: .cmyk),
        Case(file: "ycck-inverted-profile.jpg", description: "Press CMYK with dot gain (Alcedo test)", colorSpace: .cmyk),
        Case(file: "cmyk-inverted.jpg", description: GenericCMYKProfile.description, colorSpace: .cmyk),
        Case(file: "cmyk-plain.jpg", description: GenericCMYKProfile.description, colorSpace: .cmyk),
        Case(file: "ycck-inverted.jpg", description: GenericCMYKProfile.description, colorSpace: .cmyk),
    ]

    @Test("tagged files decode to sRGB within 2 per channel of Pillow ImageCms", arguments: tagged)
    func convertsToSRGB(_ fixture: Case) throws {
        let image = try ImageCodecRegistry.shared.decode(ColorFixtures.data(fixture.file))
        let reference = try ColorFixtures.reference(fixture.file)
        #expect(ColorFixtures.maxDifference(image, reference) <= 2)
        let profile = try #require(image.colorMetadata.sourceProfile)
        #expect(profile.description == fixture.description)
        #expect(profile.colorSpace == fixture.colorSpace)
        #expect(image.colorMetadata.pixelProfile == nil)
        #expect(image.colorMetadata.warning == nil)
    }

    @Test("info reports the embedded profile: description, colour space, size")
    func infoReportsProfile() throws {
        for file in ["p3.jpg", "p3.png", "p3.webp", "p3.gif"] {
            let info = try ImageCodecRegistry.shared.info(for: ColorFixtures.data(file))
            let profile = try #require(info.colorProfile, "\(file)")
            #expect(profile.description == "Display P3 (Alcedo test)")
            #expect(profile.byteCount == (try ColorFixtures.data("p3.icc")).count)
        }
        let ignored = try ImageCodecRegistry.shared.info(for: ColorFixtures.data("p3.jpg"), options: DecodingOptions(colorManagement: .ignore))
        #expect(ignored.colorProfile == nil)
    }

    @Test("the conversion changes a wide-gamut picture: ignore leaves the stored values")
    func ignoreKeepsStoredValues() throws {
        let data = try ColorFixtures.data("p3.jpg")
        let converted = try JPEGDecoder().decode(data)
        let ignored = try JPEGDecoder().decode(data, options: DecodingOptions(colorManagement: .ignore))
        #expect(ignored.colorMetadata == ImageColorMetadata())
        #expect(ColorFixtures.maxDifference(converted, ignored) > 20)
        // The P3 red corner is out of sRGB's gamut: it clips to pure red.
        #expect(converted.pixel(x: 2, y: 2) == RGBA(red: 255, green: 0, blue: 0))
    }

    @Test("a multi-segment APP2 profile is reassembled")
    func multiSegment() throws {
        let image = try JPEGDecoder().decode(ColorFixtures.data("p3-multisegment.jpg"))
        let profile = try #require(image.colorMetadata.sourceProfile)
        #expect(profile.byteCount == (try ColorFixtures.data("p3.icc")).count + 70_000)
        #expect(profile.description == "Display P3 (Alcedo test)")
        #expect(ColorFixtures.maxDifference(image, try ColorFixtures.reference("p3.jpg")) <= 2)
    }

    @Test("a truncated profile is ignored with a warning, never an error")
    func truncatedProfile() throws {
        let data = try ColorFixtures.data("truncated-profile.jpg")
        let image = try JPEGDecoder().decode(data)
        #expect(image.colorMetadata.sourceProfile == nil)
        let warning = try #require(image.colorMetadata.warning)
        #expect(warning.contains("truncated"))
        #expect(ColorFixtures.maxDifference(image, try ColorFixtures.reference("truncated-profile.jpg")) <= 2)
        #expect(try JPEGDecoder().info(for: data).colorProfile == nil)
        // Every prefix of the profile, embedded in a PNG, decodes without an error.
        let icc = try ColorFixtures.data("p3.icc")
        for length in stride(from: 0, through: icc.count, by: 37) {
            #expect(ImageColorProfile(iccData: icc.prefix(length)) == nil || length == icc.count)
        }
    }

    @Test("CMYK without the Adobe marker is plain ink, with it inverted: both give the same picture")
    func adobeInversion() throws {
        let inverted = try JPEGDecoder().decode(ColorFixtures.data("cmyk-inverted.jpg"))
        let plain = try JPEGDecoder().decode(ColorFixtures.data("cmyk-plain.jpg"))
        #expect(ColorFixtures.maxDifference(inverted, plain) <= 3)
        // Without colour management CMYK is read as Adobe's inverted CMYK, whatever the marker.
        let naive = try JPEGDecoder().decode(ColorFixtures.data("cmyk-plain.jpg"), options: DecodingOptions(colorManagement: .ignore))
        #expect(ColorFixtures.maxDifference(naive, plain) > 100)
    }

    @Test("the profile is applied after decoder-side scaling")
    func scaledDecode() throws {
        let data = try ColorFixtures.data("p3.jpg")
        let options = DecodingOptions(targetSize: PixelSize(width: 12, height: 8))
        let scaled = try JPEGDecoder().decode(data, options: options)
        #expect(scaled.width == 12 && scaled.height == 8)
        #expect(scaled.colorMetadata.sourceProfile?.description == "Display P3 (Alcedo test)")
        var ignoring = options
        ignoring.colorManagement = .ignore
        let raw = try JPEGDecoder().decode(data, options: ignoring)
        #expect(ColorFixtures.maxDifference(scaled, raw) > 20)
    }

    @Test("transforms are built once per profile and reused")
    func transformCache() throws {
        let cache = ColorTransformCache()
        let icc = try ColorFixtures.data("p3.icc")
        var builds = 0
        let key = ColorTransformCache.Key(profile: icc, input: .rgbOrGray)
        let first = cache.transform(for: key) {
            builds += 1
            return LCMSProfile(iccData: icc).flatMap { ColorTransform.make(rgbOrGray: $0) }
        }
        let second = cache.transform(for: key) {
            builds += 1
            return nil
        }
        #expect(builds == 1)
        #expect(first != nil && first === second)
        #expect(cache.count == 1)
    }

    @Test("matrix-shaper profiles take the fast path (checked against lcms when built)")
    func fastPath() throws {
        for name in ["p3", "adobe-rgb", "prophoto"] {
            let profile = try #require(LCMSProfile(iccData: try ColorFixtures.data("\(name).icc")))
            let transform = try #require(ColorTransform.make(rgbOrGray: profile))
            guard case .matrixShaper = transform.kind else { Issue.record("\(name): not the fast path"); continue }
        }
        // A CMYK profile has no fast path.
        #expect(MatrixShaperTransform(try #require(LCMSProfile(iccData: try ColorFixtures.data("press-cmyk.icc")))) == nil)
    }

    @Test("an sRGB profile is recognised and leaves the pixels alone")
    func sRGBProfileIsIdentity() throws {
        let sRGB = try #require(LCMSProfile.sRGB().iccData())
        let plan = ColorPlan.forRGBA(iccData: sRGB, mode: .convertToSRGB, format: .png)
        #expect(plan.transform == nil)
        #expect(plan.metadata.sourceProfile?.colorSpace == .rgb)
    }

    @Test("preserve keeps the source values and JPEG, PNG and WebP embed the profile",
          arguments: [ImageFormat.jpeg, .png, .webp])
    func preserveEmbeds(_ format: ImageFormat) throws {
        let data = try ColorFixtures.data("p3.png")
        let preserved = try PNGDecoder().decode(data, options: DecodingOptions(colorManagement: .preserve))
        let ignored = try PNGDecoder().decode(data, options: DecodingOptions(colorManagement: .ignore))
        #expect(preserved.pixels == ignored.pixels)
        #expect(preserved.colorMetadata.pixelProfile?.description == "Display P3 (Alcedo test)")

        // WebP lossy is always 4:2:0, which smears the saturated corners: write it losslessly.
        let encoded = try ImageCodecRegistry.shared.encode(preserved, as: format,
                                                           options: EncodingOptions(quality: 100, lossless: format == .webp))
        let info = try ImageCodecRegistry.shared.info(for: encoded)
        #expect(info.colorProfile?.description == "Display P3 (Alcedo test)")
        // Read back with the default, the embedded profile gives the sRGB picture.
        let roundTrip = try ImageCodecRegistry.shared.decode(encoded)
        let tolerance = format == .jpeg ? 8 : 2
        #expect(ColorFixtures.maxDifference(roundTrip, try ColorFixtures.reference("p3.png")) <= tolerance)
        // An sRGB image carries no profile.
        let plain = try ImageCodecRegistry.shared.encode(ignored, as: format)
        #expect(try ImageCodecRegistry.shared.info(for: plain).colorProfile == nil)
    }

    @Test("a gray profile is converted even under preserve (RGB pixels cannot carry it)")
    func grayUnderPreserve() throws {
        let image = try JPEGDecoder().decode(ColorFixtures.data("gray-18.jpg"), options: DecodingOptions(colorManagement: .preserve))
        #expect(image.colorMetadata.pixelProfile == nil)
        #expect(ColorFixtures.maxDifference(image, try ColorFixtures.reference("gray-18.jpg")) <= 2)
    }

    @Test("the generic CMYK profile is a valid ICC profile lcms can read back")
    func genericProfile() throws {
        let profile = try #require(ImageColorProfile(iccData: GenericCMYKProfile.iccData))
        #expect(profile.colorSpace == .cmyk)
        #expect(profile.description == GenericCMYKProfile.description)
    }
}
