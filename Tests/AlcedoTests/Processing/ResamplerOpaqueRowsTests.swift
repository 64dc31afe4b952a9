import CAlcedoCodecs
import Foundation
import Testing
@testable import Alcedo

@Suite("Resampler: opaque rows and the vectorised pixel loops")
struct ResamplerOpaqueRowsTests {
    @Test("the opaque store rounds to nearest even, clamps (NaN to 0) and sets alpha 255, at every tail length")
    func opaqueStore() {
        let samples: [Float] = [0, 0.49, 0.5, 1.5, 2.5, 127.5, 128.5, 254.4, 254.5, 254.6, 255, 255.4, 300, -0.4, -3,
                                .nan, .infinity, -.infinity, 17.25, 99.75]
        let expected: [UInt8] = [0, 0, 0, 2, 2, 128, 128, 254, 254, 255, 255, 255, 255, 0, 0,
                                 0, 255, 0, 17, 100]
        for count in 0...9 {
            var floats: [Float] = []
            var wanted: [UInt8] = []
            for pixel in 0..<count {
                for channel in 0..<3 {
                    let index = (pixel * 3 + channel) % samples.count
                    floats.append(samples[index])
                    wanted.append(expected[index])
                }
                floats.append(Float(pixel) * 37.3)  // alpha is ignored
                wanted.append(255)
            }
            var output = [UInt8](repeating: 7, count: count * 4 + 4)
            floats.withUnsafeBufferPointer { input in
                output.withUnsafeMutableBufferPointer { out in
                    alcedo_store_opaque_rgba8(input.baseAddress ?? UnsafePointer(bitPattern: 16)!, out.baseAddress!, count)
                }
            }
            #expect(Array(output[0..<(count * 4)]) == wanted, "\(count) pixels")
            #expect(output[(count * 4)...].allSatisfy { $0 == 7 }, "nothing is written past \(count) pixels")
        }
    }

    @Test("the byte-to-float load converts every sample, at every tail length")
    func load() {
        var generator = SystemRandomNumberGenerator()
        for count in 0...9 {
            let bytes = (0..<(count * 4)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            var floats = [Float](repeating: -1, count: count * 4 + 4)
            bytes.withUnsafeBufferPointer { input in
                floats.withUnsafeMutableBufferPointer { out in
                    alcedo_load_rgba8(input.baseAddress ?? UnsafePointer(bitPattern: 16)!, out.baseAddress!, count)
                }
            }
            #expect(Array(floats[0..<(count * 4)]) == bytes.map(Float.init), "\(count) pixels")
            #expect(floats[(count * 4)...].allSatisfy { $0 == -1 }, "nothing is written past \(count) pixels")
        }
    }

    /// The exact result in `Double` from the plan's own weight tables, straight alpha.
    static func reference(_ pixels: [UInt8], plan: ResamplerPlan) -> [Double] {
        precondition(plan.boxX == 1 && plan.boxY == 1)
        let (source, target) = (plan.source, plan.target)
        var horizontal = [Double](repeating: 0, count: source.height * target.width * 4)
        for y in 0..<source.height {
            for x in 0..<target.width {
                for tap in 0..<plan.horizontal.counts[x] {
                    let input = (y * source.width + plan.horizontal.starts[x] + tap) * 4
                    let weight = Double(plan.horizontal.values[x * plan.horizontal.stride + tap])
                    let alpha = Double(pixels[input + 3])
                    for channel in 0..<3 {
                        horizontal[(y * target.width + x) * 4 + channel] += weight * Double(pixels[input + channel]) * alpha / 255
                    }
                    horizontal[(y * target.width + x) * 4 + 3] += weight * alpha
                }
            }
        }
        var output = [Double](repeating: 0, count: target.width * target.height * 4)
        for y in 0..<target.height {
            for x in 0..<target.width {
                var sum = [Double](repeating: 0, count: 4)
                for tap in 0..<plan.vertical.counts[y] {
                    let row = plan.vertical.starts[y] + tap
                    let weight = Double(plan.vertical.values[y * plan.vertical.stride + tap])
                    for channel in 0..<4 { sum[channel] += weight * horizontal[(row * target.width + x) * 4 + channel] }
                }
                let alpha = min(max(sum[3], 0), 255)
                for channel in 0..<3 {
                    output[(y * target.width + x) * 4 + channel] = alpha < 0.5 ? 0 : min(max(sum[channel] * 255 / alpha, 0), 255)
                }
                output[(y * target.width + x) * 4 + 3] = alpha
            }
        }
        return output
    }

    @Test("rows made only of opaque pixels come out opaque, the others keep their alpha, all within 1 of the exact result",
          arguments: [(PixelSize(width: 61, height: 40), PixelSize(width: 45, height: 29)),
                      (PixelSize(width: 23, height: 30), PixelSize(width: 41, height: 52))])
    func mixedRows(_ source: PixelSize, _ target: PixelSize) {
        var generator = SystemRandomNumberGenerator()
        let translucentFrom = source.height / 2
        let pixels = ResamplerTests.pattern(width: source.width, height: source.height) { _, y in
            RGBA(red: .random(in: 0...255, using: &generator), green: .random(in: 0...255, using: &generator),
                 blue: .random(in: 0...255, using: &generator),
                 alpha: y < translucentFrom ? 255 : .random(in: 40...230, using: &generator))
        }
        let plan = ResamplerPlan(from: source, to: target)
        let result = pixels.withUnsafeBufferPointer { plan.resize($0, concurrency: .serial) }
        let exact = Self.reference(pixels, plan: plan)
        for y in 0..<target.height {
            let window = plan.vertical.starts[y]..<(plan.vertical.starts[y] + plan.vertical.counts[y])
            let opaque = window.upperBound <= translucentFrom
            for x in 0..<target.width {
                let index = (y * target.width + x) * 4
                if opaque {
                    #expect(result[index + 3] == 255, "row \(y) is made of opaque rows only")
                }
                // The other rows' alpha is checked against the exact result below.
                for channel in 0..<4 {
                    let difference = abs(Double(result[index + channel]) - exact[index + channel])
                    #expect(difference <= 1, "pixel (\(x), \(y)) channel \(channel): \(result[index + channel]) vs \(exact[index + channel])")
                }
            }
        }
    }
}
