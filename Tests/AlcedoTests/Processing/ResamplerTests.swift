import Foundation
import Testing
@testable import Alcedo

@Suite("Resampler: exact properties and odd sizes")
struct ResamplerTests {
    /// `width` x `height` pixels of one colour.
    static func solid(_ color: RGBA, width: Int, height: Int) -> [UInt8] {
        pattern(width: width, height: height) { _, _ in color }
    }

    /// `width` x `height` pixels where (x, y) is `body(x, y)`.
    static func pattern(width: Int, height: Int, _ body: (Int, Int) -> RGBA) -> [UInt8] {
        var pixels: [UInt8] = []
        pixels.reserveCapacity(width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let c = body(x, y)
                pixels += [c.red, c.green, c.blue, c.alpha]
            }
        }
        return pixels
    }

    /// The distinct pixels of an RGBA buffer.
    static func colors(_ pixels: [UInt8]) -> Set<RGBA> {
        Set(Swift.stride(from: 0, to: pixels.count, by: 4).map {
            RGBA(red: pixels[$0], green: pixels[$0 + 1], blue: pixels[$0 + 2], alpha: pixels[$0 + 3])
        })
    }

    static let sizes: [(PixelSize, PixelSize)] = [
        (PixelSize(width: 103, height: 61), PixelSize(width: 10, height: 6)),   // box 5x5 with partial blocks
        (PixelSize(width: 40, height: 30), PixelSize(width: 27, height: 19)),   // Lanczos only
        (PixelSize(width: 9, height: 5), PixelSize(width: 31, height: 17)),     // enlarge
        (PixelSize(width: 50, height: 8), PixelSize(width: 7, height: 20)),     // shrink one axis, enlarge the other
        (PixelSize(width: 33, height: 21), PixelSize(width: 1, height: 1)),
        (PixelSize(width: 1, height: 1), PixelSize(width: 5, height: 3)),
    ]

    @Test("a picture of one colour stays exactly that colour at any size",
          arguments: [RGBA(red: 12, green: 200, blue: 77), RGBA(red: 255, green: 255, blue: 255),
                      RGBA(red: 0, green: 0, blue: 0), RGBA(red: 200, green: 100, blue: 50, alpha: 128),
                      RGBA(red: 255, green: 1, blue: 254, alpha: 1)])
    func constantColor(color: RGBA) {
        for (from, to) in Self.sizes {
            let pixels = Self.solid(color, width: from.width, height: from.height)
            let resized = Resampler.resize(pixels, width: from.width, height: from.height, to: to)
            #expect(resized.count == to.pixelCount * 4)
            #expect(Self.colors(resized) == [color], "\(from) -> \(to)")
        }
    }

    @Test("fully transparent pixels do not tint their neighbours")
    func premultipliedAlpha() {
        // Left half opaque red, right half fully transparent green.
        let pixels = Self.pattern(width: 64, height: 32) { x, _ in
            x < 32 ? RGBA(red: 255, green: 0, blue: 0) : RGBA(red: 0, green: 255, blue: 0, alpha: 0)
        }
        for target in [PixelSize(width: 10, height: 5), PixelSize(width: 23, height: 11), PixelSize(width: 150, height: 70)] {
            let resized = Resampler.resize(pixels, width: 64, height: 32, to: target)
            let visible = Self.colors(resized).filter { $0.alpha > 0 }
            #expect(visible.allSatisfy { $0.red == 255 && $0.green == 0 && $0.blue == 0 }, "\(target): \(visible)")
            // The edge is soft: some pixels are partly transparent.
            #expect(visible.contains { $0.alpha < 255 }, "\(target)")
            #expect(Self.colors(resized).contains(.clear), "\(target)")
        }
    }

    @Test("a one-pixel checkerboard shrunk by a whole factor is flat grey")
    func checkerboard() {
        let pixels = Self.pattern(width: 64, height: 48) { x, y in (x + y) % 2 == 0 ? .white : .black }
        for factor in [2, 4, 8] {
            let target = PixelSize(width: 64 / factor, height: 48 / factor)
            let resized = AlcedoImage(width: 64, height: 48, pixels: pixels).resized(to: target)
            // From 4x on, the box step averages the pattern away everywhere. At 2x, Lanczos
            // alone averages it away wherever its window is whole; near the border, where
            // the window is cut, the pattern shows through a little.
            let margin = factor == 2 ? 3 : 0
            for y in margin..<(target.height - margin) {
                for x in margin..<(target.width - margin) {
                    let color = resized.pixel(x: x, y: y)
                    #expect(abs(Int(color.red) * 2 - 255) <= 2 && color.red == color.green && color.green == color.blue
                            && color.alpha == 255, "1/\(factor) at (\(x), \(y)): \(color)")
                }
            }
        }
    }

    @Test("enlarging 2x2 keeps each corner's colour dominant in its quarter")
    func upscaleCorners() {
        let corners = [RGBA(red: 255, green: 0, blue: 0), RGBA(red: 0, green: 255, blue: 0),
                       RGBA(red: 0, green: 0, blue: 255), RGBA(red: 255, green: 255, blue: 255)]
        let pixels = corners.flatMap { [$0.red, $0.green, $0.blue, $0.alpha] }
        let image = AlcedoImage(width: 2, height: 2, pixels: pixels)
        let large = image.resized(to: PixelSize(width: 16, height: 16))
        #expect(large.pixel(x: 0, y: 0) == corners[0])
        #expect(large.pixel(x: 15, y: 0) == corners[1])
        #expect(large.pixel(x: 0, y: 15) == corners[2])
        #expect(large.pixel(x: 15, y: 15) == corners[3])
        func distance(_ a: RGBA, _ b: RGBA) -> Int {
            abs(Int(a.red) - Int(b.red)) + abs(Int(a.green) - Int(b.green)) + abs(Int(a.blue) - Int(b.blue))
        }
        for y in 0..<16 {
            for x in 0..<16 where x != 7 && x != 8 && y != 7 && y != 8 {
                let own = corners[(y < 8 ? 0 : 2) + (x < 8 ? 0 : 1)]
                let pixel = large.pixel(x: x, y: y)
                #expect(corners.allSatisfy { distance(pixel, own) < distance(pixel, $0) || $0 == own }, "(\(x), \(y)): \(pixel)")
            }
        }
    }

    @Test("the same size gives the same pixels back")
    func sameSize() {
        let pixels = Self.pattern(width: 7, height: 5) { x, y in RGBA(red: UInt8(x * 30), green: UInt8(y * 40), blue: 9, alpha: UInt8(100 + x)) }
        #expect(Resampler.resize(pixels, width: 7, height: 5, to: PixelSize(width: 7, height: 5)) == pixels)
        let copy = pixels.withUnsafeBufferPointer { Resampler.resize($0, width: 7, height: 5, to: PixelSize(width: 7, height: 5)) }
        #expect(copy == pixels)
        // Resizing one axis only leaves the other axis' samples exact.
        let taller = Resampler.resize(pixels, width: 7, height: 5, to: PixelSize(width: 7, height: 11))
        #expect(taller.count == 7 * 11 * 4)
        #expect(Array(taller[0..<28]) == Array(pixels[0..<28]))
    }

    @Test("tiny and extreme sizes never crash and average sensibly")
    func extremeSizes() {
        let one = [UInt8]([10, 20, 30, 40])
        #expect(Resampler.resize(one, width: 1, height: 1, to: PixelSize(width: 1, height: 1)) == one)
        #expect(Self.colors(Resampler.resize(one, width: 1, height: 1, to: PixelSize(width: 50, height: 1)))
                == [RGBA(red: 10, green: 20, blue: 30, alpha: 40)])
        // A side below 1 is raised to 1.
        #expect(Resampler.resize(one, width: 1, height: 1, to: PixelSize(width: 0, height: -3)) == one)

        // 4000x1 of a ramp to 1x1: the mean of the ramp.
        let ramp = Self.pattern(width: 4000, height: 1) { x, _ in RGBA(red: UInt8(x * 255 / 3999), green: 7, blue: 0) }
        let mean = Resampler.resize(ramp, width: 4000, height: 1, to: PixelSize(width: 1, height: 1))
        #expect(abs(Int(mean[0]) - 127) <= 1 && mean[1] == 7 && mean[2] == 0 && mean[3] == 255, "\(mean)")

        // 1xN and Nx1 both ways.
        let column = Self.pattern(width: 1, height: 301) { _, y in RGBA(red: UInt8(y % 2 * 200), green: 0, blue: 0) }
        let shortColumn = Resampler.resize(column, width: 1, height: 301, to: PixelSize(width: 1, height: 3))
        #expect(shortColumn.count == 12)
        for i in 0..<3 { #expect(abs(Int(shortColumn[i * 4]) - 100) <= 2, "\(shortColumn)") }
        let wide = Resampler.resize(column, width: 1, height: 301, to: PixelSize(width: 40, height: 2))
        #expect(wide.count == 40 * 2 * 4)
    }

    @Test("a block taller than 257 rows sums exactly", arguments: [true, false])
    func tallBlocks(opaque: Bool) {
        // 2x1200 to 1x2: the box factor is 300 rows, past what 16-bit row sums can hold.
        let from = PixelSize(width: 2, height: 1200), to = PixelSize(width: 1, height: 2)
        #expect(Resampler.boxFactors(from: from, to: to) == (1, 300))
        let alpha: UInt8 = opaque ? 255 : 51
        // Four blocks of 300 rows; rows alternate around each block's mean colour.
        let means = [RGBA(red: 250, green: 10, blue: 9, alpha: alpha), RGBA(red: 200, green: 60, blue: 9, alpha: alpha),
                     RGBA(red: 40, green: 200, blue: 9, alpha: alpha), RGBA(red: 5, green: 250, blue: 9, alpha: alpha)]
        let pixels = Self.pattern(width: from.width, height: from.height) { _, y in
            let mean = means[y / 300], step: UInt8 = y % 2 == 0 ? 5 : 0
            return RGBA(red: mean.red &- step &+ (5 - step), green: mean.green &+ step &- (5 - step), blue: 9, alpha: alpha)
        }
        let resized = Resampler.resize(pixels, width: from.width, height: from.height, to: to)
        // The same Lanczos step from the 2x4 picture of the block means.
        let blocks = Self.pattern(width: 2, height: 4) { _, y in means[y] }
        let expected = Resampler.resize(blocks, width: 2, height: 4, to: to)
        #expect(zip(resized, expected).allSatisfy { abs(Int($0) - Int($1)) <= 1 }, "\(resized) against \(expected)")
    }

    @Test("box rows are the exact premultiplied block averages, partial blocks included",
          arguments: [(5, 5), (3, 7), (1, 4), (6, 1)])
    func boxAverages(boxX: Int, boxY: Int) {
        // 103 pixels = 412 bytes: the wide strips, a 16-byte strip and single bytes all run.
        let width = 103, height = 23
        let pixels = Self.pattern(width: width, height: height) { x, y in
            RGBA(red: UInt8((x * 37 + y * 11) & 255), green: UInt8((x * y) & 255), blue: UInt8((200 - x) & 255),
                 alpha: y % 4 == 1 ? UInt8((x * 5 + y) & 255) : 255)
        }
        let rowWidth = (width + boxX - 1) / boxX
        let output = UnsafeMutableBufferPointer<SIMD4<Float>>.allocate(capacity: rowWidth)
        defer { output.deallocate() }
        pixels.withUnsafeBufferPointer { source in
            let box = ResamplerBox(source: source, width: width, height: height, boxX: boxX, boxY: boxY)
            #expect(box.rowWidth == rowWidth)
            for row in 0..<((height + boxY - 1) / boxY) {
                box.makeRow(row, into: output)
                for column in 0..<rowWidth {
                    var sum = SIMD4<Double>(), count = 0.0
                    for y in (row * boxY)..<min(row * boxY + boxY, height) {
                        for x in (column * boxX)..<min(column * boxX + boxX, width) {
                            let offset = (y * width + x) * 4
                            let alpha = Double(pixels[offset + 3])
                            sum += SIMD4(Double(pixels[offset]) * alpha / 255, Double(pixels[offset + 1]) * alpha / 255,
                                         Double(pixels[offset + 2]) * alpha / 255, alpha)
                            count += 1
                        }
                    }
                    let expected = sum / count
                    let got = SIMD4<Double>(Double(output[column].x), Double(output[column].y),
                                            Double(output[column].z), Double(output[column].w))
                    let error = (got - expected).replacing(with: -(got - expected), where: got - expected .< 0).max()
                    #expect(error < 1e-3, "row \(row), column \(column): \(got) against \(expected)")
                }
            }
        }
    }

    @Test("box factors keep at least twice the target and cap the block area")
    func boxFactors() {
        #expect(Resampler.boxFactors(from: PixelSize(width: 4000, height: 3000), to: PixelSize(width: 400, height: 300)) == (5, 5))
        #expect(Resampler.boxFactors(from: PixelSize(width: 4032, height: 3024), to: PixelSize(width: 400, height: 300)) == (5, 5))
        #expect(Resampler.boxFactors(from: PixelSize(width: 1000, height: 1000), to: PixelSize(width: 600, height: 250)) == (1, 2))
        #expect(Resampler.boxFactors(from: PixelSize(width: 10, height: 10), to: PixelSize(width: 100, height: 3)) == (1, 1))
        let huge = Resampler.boxFactors(from: PixelSize(width: 1_000_000, height: 1_000_000), to: PixelSize(width: 1, height: 1))
        #expect(huge == (256, 256))
        let line = Resampler.boxFactors(from: PixelSize(width: 1_000_000, height: 1), to: PixelSize(width: 1, height: 1))
        #expect(line == (ResamplerBox.maximumBoxArea, 1))
    }

    @Test("weights are normalised, inside the input and centred",
          arguments: [(227, 80), (80, 227), (300, 150), (1, 9), (9, 1), (13, 13), (2, 7)])
    func weights(input: Int, output: Int) {
        let weights = ResamplerWeights(inputCount: input, outputCount: output)
        #expect(weights.starts.count == output && weights.values.count == output * weights.stride)
        for index in 0..<output {
            let start = weights.starts[index], count = weights.counts[index]
            #expect(start >= 0 && count >= 1 && count <= weights.stride && start + count <= input)
            let window = weights.values[(index * weights.stride)..<(index * weights.stride + count)]
            #expect(abs(window.reduce(0, +) - 1) < 1e-5, "output \(index): \(Array(window))")
            #expect(weights.values[(index * weights.stride + count)..<((index + 1) * weights.stride)].allSatisfy { $0 == 0 })
        }
        if input == output { #expect(weights.isIdentity) }
        // Shrinking widens the kernel; enlarging keeps 3 pixels each side.
        let expectedStride = min(input, Int((3 * max(1, Double(input) / Double(output))).rounded(.up)) * 2 + 1)
        #expect(input == output || weights.stride == expectedStride)
    }

    @Test("bands on several cores give the same bytes as one core",
          arguments: [(PixelSize(width: 700, height: 420), PixelSize(width: 90, height: 50)),     // box + Lanczos
                      (PixelSize(width: 500, height: 400), PixelSize(width: 333, height: 267)),  // Lanczos only
                      (PixelSize(width: 90, height: 70), PixelSize(width: 600, height: 450))])   // enlarge
    func parallelMatchesSerial(from: PixelSize, to: PixelSize) {
        let pixels = Self.pattern(width: from.width, height: from.height) { x, y in
            RGBA(red: UInt8((x * 7 + y) & 255), green: UInt8((x ^ y) & 255), blue: UInt8((x * y) & 255),
                 alpha: y % 3 == 0 ? 255 : UInt8((x + 3 * y) & 255))
        }
        let plan = ResamplerPlan(from: from, to: to)
        #expect(plan.estimatedWork >= ResamplerPlan.parallelWorkThreshold)
        if ProcessInfo.processInfo.activeProcessorCount > 1 { #expect(plan.bandCount(for: .automatic) > 1) }
        pixels.withUnsafeBufferPointer { buffer in
            let serial = plan.resize(buffer, concurrency: .serial)
            #expect(plan.resize(buffer, concurrency: .bands(3)) == serial)
            #expect(plan.resize(buffer, concurrency: .bands(17)) == serial)
            #expect(plan.resize(buffer, concurrency: .automatic) == serial)
            // A core limit (Resampler.maximumConcurrency) bounds the automatic bands only (the
            // bytes are the same for any band count, above). The global itself is left alone:
            // tests run in parallel.
            #expect(plan.bandCount(for: .automatic, coreLimit: 1) == 1)
            #expect(plan.bandCount(for: .bands(3), coreLimit: 1) == 3)
        }
    }

    @Test("Resampler.maximumConcurrency is 0 (every core) by default and never negative")
    func maximumConcurrencyDefault() {
        #expect(Resampler.maximumConcurrency == 0)
        Resampler.maximumConcurrency = -3 // stored as 0: the value every other test sees stays the same
        #expect(Resampler.maximumConcurrency == 0)
    }
}
