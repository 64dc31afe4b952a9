import Foundation
import Testing
@testable import Alcedo

@Suite("Resampler on images: frames, fit and fill")
struct ResamplerImageTests {
    static func solidFrame(_ color: RGBA, size: PixelSize, duration: Double) -> AlcedoImage.Frame {
        AlcedoImage.Frame(pixels: ResamplerTests.solid(color, width: size.width, height: size.height), duration: duration)
    }

    @Test("every frame is resized and durations, loop count and format are kept")
    func animation() {
        let size = PixelSize(width: 30, height: 20)
        let colors = [RGBA(red: 255, green: 0, blue: 0), RGBA(red: 0, green: 0, blue: 255, alpha: 90), RGBA(red: 9, green: 99, blue: 199)]
        let frames = colors.enumerated().map { Self.solidFrame($1, size: size, duration: 0.1 * Double($0 + 1)) }
        let image = AlcedoImage(width: 30, height: 20, frames: frames, loopCount: 3, sourceFormat: .gif, orientation: .right)
        let small = image.resized(to: PixelSize(width: 7, height: 4))
        #expect(small.pixelSize == PixelSize(width: 7, height: 4))
        #expect(small.frames.count == 3)
        #expect(small.frames.map(\.duration) == [0.1, 0.2, 0.30000000000000004])
        #expect(small.loopCount == 3 && small.sourceFormat == .gif && small.orientation == .right)
        for (frame, color) in zip(small.frames, colors) {
            #expect(ResamplerTests.colors(frame.pixels) == [color])
        }
    }

    @Test("small frames resized side by side give the same bytes as one by one")
    func framesInParallel() {
        let from = PixelSize(width: 200, height: 150), to = PixelSize(width: 50, height: 40)
        let plan = ResamplerPlan(from: from, to: to)
        #expect(plan.estimatedWork < ResamplerPlan.parallelWorkThreshold)
        #expect(plan.estimatedWork * 4 >= ResamplerPlan.parallelWorkThreshold)
        let frames = (0..<4).map { index in
            ResamplerTests.pattern(width: from.width, height: from.height) { x, y in
                RGBA(red: UInt8((x + index * 40) & 255), green: UInt8(y & 255), blue: UInt8((x * y + index) & 255),
                     alpha: UInt8(255 - index * 60))
            }
        }
        let serial = AlcedoImage.resize(frames, with: plan, concurrency: .serial)
        #expect(serial.count == 4 && serial.allSatisfy { $0.count == to.pixelCount * 4 })
        #expect(AlcedoImage.resize(frames, with: plan) == serial)
    }

    /// (bounds, content mode, expected size) for a 200x100 picture; `nil`: returned as it is.
    static let boundsCases: [(PixelSize, ContentMode, PixelSize?)] = [
        (PixelSize(width: 50, height: 50), .aspectFit, PixelSize(width: 50, height: 25)),
        (PixelSize(width: 400, height: 40), .aspectFit, PixelSize(width: 80, height: 40)),
        (PixelSize(width: 400, height: 400), .aspectFit, nil),
        (PixelSize(width: 0, height: 0), .aspectFit, PixelSize(width: 1, height: 1)),
        (PixelSize(width: 50, height: 50), .aspectFill, PixelSize(width: 100, height: 50)),
        (PixelSize(width: 150, height: 20), .aspectFill, PixelSize(width: 150, height: 75)),
        (PixelSize(width: 300, height: 50), .aspectFill, nil),
    ]

    @Test("fit and fill keep the aspect ratio, never enlarge and never crop", arguments: boundsCases)
    func fitAndFill(bounds: PixelSize, mode: ContentMode, expected: PixelSize?) {
        let size = PixelSize(width: 200, height: 100)
        let image = AlcedoImage(frames: [Self.solidFrame(.white, size: size, duration: 0)], size: size)
        let resized = mode == .aspectFit ? image.resized(toFit: bounds) : image.resized(toFill: bounds)
        if let expected {
            #expect(resized.pixelSize == expected)
            #expect(ResamplerTests.colors(resized.pixels) == [.white])
        } else {
            #expect(resized == image)
        }
    }

    @Test("the exact size is honoured and the same size returns the image itself")
    func exactSize() {
        let image = AlcedoImage(frames: [Self.solidFrame(.white, size: PixelSize(width: 20, height: 10), duration: 0)],
                                size: PixelSize(width: 20, height: 10))
        #expect(image.resized(to: image.pixelSize) == image)
        let stretched = image.resized(to: PixelSize(width: 5, height: 30))
        #expect(stretched.pixelSize == PixelSize(width: 5, height: 30))
        #expect(ResamplerTests.colors(stretched.pixels) == [.white])
    }
}

extension AlcedoImage {
    fileprivate init(frames: [Frame], size: PixelSize) {
        self.init(width: size.width, height: size.height, frames: frames)
    }
}
