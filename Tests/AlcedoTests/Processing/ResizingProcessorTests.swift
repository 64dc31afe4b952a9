import Testing
@testable import Alcedo

@Suite("ResizingImageProcessor and DownsamplingImageProcessor")
struct ResizingProcessorTests {
    static let teal = RGBA(red: 0, green: 128, blue: 128, alpha: 200)

    @Test("sizes for each mode: Kingfisher's 100x200 into 100x100, and enlarging")
    func targetSizes() {
        let reference = PixelSize(width: 100, height: 100)
        let tall = PixelSize(width: 100, height: 200)
        #expect(ResizingImageProcessor(referenceSize: reference).targetSize(for: tall) == reference)
        #expect(ResizingImageProcessor(referenceSize: reference, mode: .aspectFit).targetSize(for: tall)
                == PixelSize(width: 50, height: 100))
        #expect(ResizingImageProcessor(referenceSize: reference, mode: .aspectFill).targetSize(for: tall) == tall)
        let small = PixelSize(width: 10, height: 5)
        #expect(ResizingImageProcessor(referenceSize: reference, mode: .aspectFit).targetSize(for: small)
                == PixelSize(width: 100, height: 50))
        #expect(ResizingImageProcessor(referenceSize: reference, mode: .aspectFill).targetSize(for: small)
                == PixelSize(width: 200, height: 100))
        #expect(ResizingImageProcessor(referenceSize: PixelSize(width: Int.max, height: 1), mode: .aspectFit)
                .targetSize(for: small) == PixelSize(width: 2, height: 1))
    }

    @Test("resizing gives the size asked for, a solid colour stays that colour, pixels are the resampler's")
    func resize() throws {
        let image = Synthetic.solid(Self.teal, width: 8, height: 4)
        let exact = try ResizingImageProcessor(referenceSize: PixelSize(width: 3, height: 5)).process(image)
        #expect(exact == Synthetic.solid(Self.teal, width: 3, height: 5))
        let fit = try ResizingImageProcessor(referenceSize: PixelSize(width: 4, height: 4), mode: .aspectFit).process(image)
        #expect(fit == Synthetic.solid(Self.teal, width: 4, height: 2))
        let gradient = Synthetic.gradient(width: 9, height: 7)
        let up = try ResizingImageProcessor(referenceSize: PixelSize(width: 18, height: 18), mode: .aspectFit).process(gradient)
        #expect(up.pixelSize == PixelSize(width: 18, height: 14))
        #expect(up == gradient.resized(to: PixelSize(width: 18, height: 14)))
        #expect(try ResizingImageProcessor(referenceSize: gradient.pixelSize).process(gradient) == gradient)
    }

    @Test("downsampling asks the decoder to scale, fits inside the size and never enlarges")
    func downsampling() throws {
        let processor = DownsamplingImageProcessor(size: PixelSize(width: 4, height: 4))
        #expect(processor.decodingTarget?.size == PixelSize(width: 4, height: 4))
        #expect(processor.decodingTarget?.mode == .aspectFit)
        #expect((processor |> BlurImageProcessor(blurRadius: 1)).decodingTarget?.size == PixelSize(width: 4, height: 4))
        #expect(DownsamplingImageProcessor(size: PixelSize(width: 0, height: 4)).decodingTarget == nil)
        let image = Synthetic.solid(Self.teal, width: 8, height: 4)
        #expect(try processor.process(image) == Synthetic.solid(Self.teal, width: 4, height: 2))
        let small = Synthetic.gradient(width: 3, height: 2)
        #expect(try processor.process(small) == small)
        let gradient = Synthetic.gradient(width: 12, height: 9)
        #expect(try processor.process(gradient) == gradient.resized(to: PixelSize(width: 4, height: 3)))
    }

    @Test("sizes out of range are typed errors, before anything is allocated")
    func errors() {
        let image = Synthetic.gradient(width: 4, height: 4)
        #expect(invalidParameter { () throws(AlcedoError) in
            try ResizingImageProcessor(referenceSize: PixelSize(width: 0, height: 10)).process(image)
        }?.message.contains("referenceSize") == true)
        #expect(invalidParameter { () throws(AlcedoError) in
            try DownsamplingImageProcessor(size: PixelSize(width: 10, height: -1)).process(image)
        }?.processor == "DownsamplingImageProcessor")
        for processor: any ImageProcessor in [
            ResizingImageProcessor(referenceSize: PixelSize(width: 100_000, height: 100_000)),
            ResizingImageProcessor(referenceSize: PixelSize(width: Int.max, height: 2), mode: .aspectFill),
            ResizingImageProcessor(referenceSize: PixelSize(width: Int.max, height: Int.max), mode: .aspectFit),
            RoundCornerImageProcessor(cornerRadius: 2, targetSize: PixelSize(width: 50_000, height: 50_000)),
        ] {
            do {
                _ = try processor.process(image)
                Issue.record("\(processor.identifier) accepted a huge output")
            } catch {
                guard case .outputTooLarge? = error.processorCause else {
                    Issue.record("\(processor.identifier): \(error)")
                    continue
                }
            }
        }
        // 4 frames of 6000x6000 are within the pixel limit per frame but over the byte limit in all.
        let animation = AlcedoImage(width: 1, height: 1, frames: Array(repeating: .init(pixels: [1, 2, 3, 4]), count: 4))
        do {
            _ = try ResizingImageProcessor(referenceSize: PixelSize(width: 6000, height: 6000)).process(animation)
            Issue.record("an animation over the byte limit was accepted")
        } catch {
            guard case .outputTooLarge(_, _, let limit)? = error.processorCause else {
                Issue.record("\(error)")
                return
            }
            #expect(limit == DecodingLimits.default.maxTotalBytes)
        }
    }
}
