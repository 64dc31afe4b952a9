import Testing
@testable import Alcedo

@Suite("BlendImageProcessor")
struct BlendProcessorTests {
    static let source = RGBA(red: 200, green: 100, blue: 50)
    static let backdrop = RGBA(red: 100, green: 150, blue: 200)

    @Test("each mode on known values: image (200, 100, 50) over background (100, 150, 200)", arguments: [
        (BlendImageProcessor.BlendMode.normal, RGBA(red: 200, green: 100, blue: 50)),
        (.multiply, RGBA(red: 78, green: 59, blue: 39)),      // 78.4, 58.8, 39.2
        (.screen, RGBA(red: 222, green: 191, blue: 211)),     // 221.6, 191.2, 210.8
        (.overlay, RGBA(red: 157, green: 127, blue: 167)),    // 156.9, 127.4, 166.6
        (.darken, RGBA(red: 100, green: 100, blue: 50)),
        (.lighten, RGBA(red: 200, green: 150, blue: 200)),
        (.hardLight, RGBA(red: 188, green: 118, blue: 78)),   // 188.1, 117.6, 78.4
        (.difference, RGBA(red: 100, green: 50, blue: 150)),
        (.exclusion, RGBA(red: 143, green: 132, blue: 172)),  // 143.1, 132.4, 171.6
    ])
    func modes(mode: BlendImageProcessor.BlendMode, expected: RGBA) throws {
        let image = Synthetic.solid(Self.source, width: 2, height: 2)
        let result = try BlendImageProcessor(blendMode: mode, backgroundColor: Self.backdrop).process(image)
        #expect(channelDifference(result.pixel(x: 1, y: 1), expected) <= 1, "\(result.pixel(x: 1, y: 1))")
    }

    @Test("alpha mixes the blended image with the background")
    func alpha() throws {
        let image = Synthetic.solid(Self.source, width: 2, height: 2)
        let normal = try BlendImageProcessor(blendMode: .normal, alpha: 0.5, backgroundColor: Self.backdrop).process(image)
        #expect(channelDifference(normal.pixel(x: 0, y: 0), RGBA(red: 150, green: 125, blue: 125)) <= 1)
        let multiply = try BlendImageProcessor(blendMode: .multiply, alpha: 0.5, backgroundColor: Self.backdrop).process(image)
        #expect(channelDifference(multiply.pixel(x: 0, y: 0), RGBA(red: 89, green: 104, blue: 120)) <= 1)
        #expect(try BlendImageProcessor(blendMode: .screen, alpha: 0, backgroundColor: Self.backdrop).process(image)
                == Synthetic.solid(Self.backdrop, width: 2, height: 2))
    }

    @Test("without a background every mode keeps the image, its alpha times the opacity")
    func noBackground() throws {
        let image = Synthetic.animated(width: 4, height: 3).frame(at: 0)
        for mode in BlendImageProcessor.BlendMode.allCases {
            #expect(try BlendImageProcessor(blendMode: mode).process(image) == image, "\(mode)")
        }
        let faded = try BlendImageProcessor(blendMode: .multiply, alpha: 0.5).process(Synthetic.solid(Self.source, width: 1, height: 1))
        #expect(faded.pixel(x: 0, y: 0) == RGBA(red: 200, green: 100, blue: 50, alpha: 128))
    }

    @Test("a translucent image pixel shows the background through it")
    func translucentSource() throws {
        let image = Synthetic.solid(RGBA(red: 200, green: 100, blue: 50, alpha: 0), width: 1, height: 1)
        let result = try BlendImageProcessor(blendMode: .multiply, backgroundColor: Self.backdrop).process(image)
        #expect(result.pixel(x: 0, y: 0) == Self.backdrop)
    }
}
