import Testing
@testable import Alcedo

@Suite("CompositingImageProcessor")
struct CompositingProcessorTests {
    static let source = RGBA(red: 200, green: 100, blue: 50)
    static let backdrop = RGBA(red: 100, green: 150, blue: 200)

    /// The image at half opacity over an opaque background: S = ½·(200, 100, 50), αS = ½;
    /// D = (100, 150, 200), αD = 1 (results straight RGBA8).
    @Test("Porter-Duff operators and plus-lighter/darker on known values", arguments: [
        (CompositingImageProcessor.CompositingOperation.clear, RGBA(red: 0, green: 0, blue: 0, alpha: 0)),
        (.copy, RGBA(red: 200, green: 100, blue: 50, alpha: 128)),
        (.sourceOver, RGBA(red: 150, green: 125, blue: 125)),
        (.sourceIn, RGBA(red: 200, green: 100, blue: 50, alpha: 128)),
        (.sourceOut, RGBA(red: 0, green: 0, blue: 0, alpha: 0)),
        (.sourceAtop, RGBA(red: 150, green: 125, blue: 125)),
        (.destinationOver, RGBA(red: 100, green: 150, blue: 200)),
        (.destinationIn, RGBA(red: 100, green: 150, blue: 200, alpha: 128)),
        (.destinationOut, RGBA(red: 100, green: 150, blue: 200, alpha: 128)),
        (.destinationAtop, RGBA(red: 100, green: 150, blue: 200, alpha: 128)),
        (.xor, RGBA(red: 100, green: 150, blue: 200, alpha: 128)),
        (.plusLighter, RGBA(red: 200, green: 200, blue: 225)),
        (.plusDarker, RGBA(red: 73, green: 73, blue: 98)),   // max(0, S + D - 1): 72.5, 72.5, 97.5
    ])
    func porterDuff(operation: CompositingImageProcessor.CompositingOperation, expected: RGBA) throws {
        let image = Synthetic.solid(Self.source, width: 2, height: 2)
        let result = try CompositingImageProcessor(compositingOperation: operation, alpha: 0.5, backgroundColor: Self.backdrop)
            .process(image)
        let pixel = result.pixel(x: 1, y: 1)
        #expect(channelDifference(pixel, expected) <= 1, "\(operation): \(pixel)")
    }

    @Test("separable blend operations give what BlendImageProcessor gives")
    func separableModesMatchBlend() throws {
        let image = Synthetic.solid(Self.source, width: 2, height: 2)
        for operation in CompositingImageProcessor.CompositingOperation.allCases {
            guard let mode = operation.separableMode else { continue }
            for alpha in [1.0, 0.4] {
                let composited = try CompositingImageProcessor(compositingOperation: operation, alpha: alpha, backgroundColor: Self.backdrop)
                    .process(image).pixel(x: 0, y: 0)
                let blended = try BlendImageProcessor(blendMode: mode, alpha: alpha, backgroundColor: Self.backdrop)
                    .process(image).pixel(x: 0, y: 0)
                #expect(channelDifference(composited, blended) <= 1, "\(operation) \(alpha): \(composited) vs \(blended)")
            }
        }
    }

    @Test("non-separable operations: hue, saturation, color and luminosity (W3C formulas)")
    func nonSeparable() throws {
        func run(_ operation: CompositingImageProcessor.CompositingOperation, _ source: RGBA) throws -> RGBA {
            try CompositingImageProcessor(compositingOperation: operation, backgroundColor: Self.backdrop)
                .process(Synthetic.solid(source, width: 1, height: 1)).pixel(x: 0, y: 0)
        }
        // Luminosity: the background (lum 140.5) moved to the image's luminosity (124.5).
        #expect(channelDifference(try run(.luminosity, Self.source), RGBA(red: 84, green: 134, blue: 184)) <= 1)
        // Color: the image moved to the background's luminosity.
        #expect(channelDifference(try run(.color, Self.source), RGBA(red: 216, green: 116, blue: 66)) <= 1)
        // Saturation of a grey image: a grey at the background's luminosity.
        #expect(channelDifference(try run(.saturation, RGBA(red: 128, green: 128, blue: 128)), RGBA(red: 141, green: 141, blue: 141)) <= 1)
        // Hue of pure red: red with the background's saturation (100) and luminosity.
        #expect(channelDifference(try run(.hue, RGBA(red: 255, green: 0, blue: 0)), RGBA(red: 211, green: 111, blue: 111)) <= 1)
    }

    @Test("without a background, source-over keeps the image; Kingfisher's initialiser takes a colour")
    func transparentBackgroundAndKingfisherShape() throws {
        let image = Synthetic.animated(width: 4, height: 3)
        #expect(try CompositingImageProcessor(compositingOperation: .sourceOver).process(image) == image)
        let kingfisher = CompositingImageProcessor(compositingOperation: .darken, alpha: 1.0, backgroundColor: .lightGray)
        let alcedo = CompositingImageProcessor(compositingOperation: .darken, alpha: 1, backgroundColor: AlcedoColor.lightGray.pixel)
        #expect(kingfisher.identifier == alcedo.identifier)
        #expect(kingfisher.identifier == "com.alcedo.compositing(darken,1.0,#AAAAAAFF)")
        #expect(throws: AlcedoError.self) { try CompositingImageProcessor(compositingOperation: .copy, alpha: 2).process(image) }
    }
}
