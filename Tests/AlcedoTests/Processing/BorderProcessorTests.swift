import Testing
@testable import Alcedo

@Suite("BorderImageProcessor")
struct BorderProcessorTests {
    static let red = RGBA(red: 255, green: 0, blue: 0)

    @Test("a whole-pixel border paints exactly the edge band")
    func band() throws {
        let image = Synthetic.solid(.white, width: 8, height: 7)
        let result = try BorderImageProcessor(border: 2, color: Self.red).process(image)
        for y in 0..<7 {
            for x in 0..<8 {
                let inBand = x < 2 || x >= 6 || y < 2 || y >= 5
                #expect(result.pixel(x: x, y: y) == (inBand ? Self.red : .white), "(\(x), \(y))")
            }
        }
    }

    @Test("a fractional width half-covers the inner pixel; a translucent colour is composited")
    func fractionalAndTranslucent() throws {
        let image = Synthetic.solid(.white, width: 8, height: 8)
        let thick = try BorderImageProcessor(border: 1.5, color: Self.red).process(image)
        #expect(thick.pixel(x: 0, y: 4) == Self.red)
        #expect(channelDifference(thick.pixel(x: 1, y: 4), RGBA(red: 255, green: 128, blue: 128)) <= 1)
        #expect(thick.pixel(x: 2, y: 4) == .white)
        let translucent = try BorderImageProcessor(border: 1, color: RGBA(red: 255, green: 0, blue: 0, alpha: 128)).process(image)
        #expect(channelDifference(translucent.pixel(x: 0, y: 0), RGBA(red: 255, green: 127, blue: 127)) <= 1)
        #expect(translucent.pixel(x: 1, y: 1) == .white)
    }

    @Test("a rounded border follows the corner and leaves the outside as it was")
    func rounded() throws {
        let image = Synthetic.solid(.white, width: 12, height: 12)
        let result = try BorderImageProcessor(border: 2, color: Self.red, cornerRadius: .point(5)).process(image)
        #expect(result.pixel(x: 0, y: 0) == .white)   // outside the outline: untouched, as in Kingfisher
        #expect(result.pixel(x: 0, y: 6) == Self.red)
        #expect(result.pixel(x: 6, y: 1) == Self.red)
        #expect(result.pixel(x: 6, y: 6) == .white)
        // On the diagonal the band runs between distance 5 and 3 from the corner centre (5, 5).
        #expect(result.pixel(x: 2, y: 2).green < 60)      // centre at distance 3.5
        let edge = result.pixel(x: 2, y: 3).green          // centre at distance 2.9: on the inner curve
        #expect(edge > 60 && edge < 255)
        #expect(result.pixel(x: 3, y: 3) == .white)       // centre at distance 2.1
        // Rounded first, then bordered: the corner is transparent and the ring is red.
        let ring = try (RoundCornerImageProcessor(cornerRadius: 5) |> BorderImageProcessor(border: 2, color: Self.red,
                                                                                          cornerRadius: .point(5))).process(image)
        #expect(ring.pixel(x: 0, y: 0) == .clear)
        #expect(ring.pixel(x: 0, y: 6) == Self.red)
    }

    @Test("width 0 or a transparent colour changes nothing; a width over half the image fills it")
    func extremes() throws {
        let image = Synthetic.gradient(width: 5, height: 4)
        #expect(try BorderImageProcessor(border: 0, color: Self.red).process(image) == image)
        #expect(try BorderImageProcessor(border: 3, color: .clear).process(image) == image)
        let filled = try BorderImageProcessor(border: 10, color: Self.red).process(image)
        #expect(filled == Synthetic.solid(Self.red, width: 5, height: 4))
    }
}
