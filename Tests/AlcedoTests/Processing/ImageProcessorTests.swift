import Testing
@testable import Alcedo

@Suite("Image processors: identifiers, composition, animation, odd sizes")
struct ImageProcessorTests {
    /// One of each processor, with non-default parameters.
    static let processors: [any ImageProcessor] = [
        DownsamplingImageProcessor(size: PixelSize(width: 3, height: 3)),
        ResizingImageProcessor(referenceSize: PixelSize(width: 4, height: 3), mode: .aspectFill),
        RoundCornerImageProcessor(radius: .heightFraction(0.3), targetSize: PixelSize(width: 5, height: 4)),
        CroppingImageProcessor(size: PixelSize(width: 3, height: 2), anchor: .bottomRight),
        RoundCornerImageProcessor(radius: .point(3), roundingCorners: [.topLeft, .bottomRight]),
        RoundCornerImageProcessor(radius: .widthFraction(0.5), backgroundColor: .white),
        BorderImageProcessor(border: 1.5, color: RGBA(red: 255, green: 0, blue: 0, alpha: 200), cornerRadius: .point(2)),
        BlurImageProcessor(blurRadius: 1.2),
        OverlayImageProcessor(overlay: RGBA(red: 0, green: 0, blue: 255), fraction: 0.3),
        TintImageProcessor(tint: RGBA(red: 0, green: 255, blue: 0, alpha: 100)),
        ColorControlsProcessor(brightness: 0.1, contrast: 1.2, saturation: 0.5, inputEV: 0.3),
        BlackWhiteProcessor(),
        BlendImageProcessor(blendMode: .multiply, alpha: 0.8, backgroundColor: RGBA(red: 10, green: 200, blue: 90)),
    ]

    @Test("identifiers carry the com.alcedo. prefix and are pairwise distinct")
    func identifiersDistinct() {
        let identifiers = Self.processors.map(\.identifier)
        for identifier in identifiers { #expect(identifier.hasPrefix("com.alcedo.")) }
        #expect(Set(identifiers).count == identifiers.count)
    }

    @Test("identifiers spell out every parameter")
    func identifierExamples() {
        #expect(RoundCornerImageProcessor(cornerRadius: 8).identifier == "com.alcedo.roundcorner(8.0,all,-,-)")
        #expect(RoundCornerImageProcessor(radius: .widthFraction(0.5), roundingCorners: [.topLeft, .topRight],
                                          backgroundColor: RGBA(red: 255, green: 128, blue: 0)).identifier
                == "com.alcedo.roundcorner(w0.5,topLeft|topRight,-,#FF8000FF)")
        #expect(CroppingImageProcessor(size: PixelSize(width: 20, height: 10)).identifier == "com.alcedo.cropping(20x10,0.5,0.5)")
        #expect(BorderImageProcessor(border: 2).identifier == "com.alcedo.border(2.0,#000000FF,0.0,all)")
        #expect(BlurImageProcessor(blurRadius: 4).identifier == "com.alcedo.blur(4.0)")
        #expect(OverlayImageProcessor(overlay: .white).identifier == "com.alcedo.overlay(#FFFFFFFF,0.5)")
        #expect(TintImageProcessor(tint: RGBA(red: 1, green: 2, blue: 3, alpha: 4)).identifier == "com.alcedo.tint(#01020304)")
        #expect(ColorControlsProcessor(saturation: 0, inputEV: 0.7).identifier == "com.alcedo.colorcontrols(0.0,1.0,0.0,0.7)")
        #expect(BlackWhiteProcessor().identifier == "com.alcedo.blackwhite")
        #expect(BlendImageProcessor(blendMode: .screen).identifier == "com.alcedo.blend(screen,1.0,-)")
        #expect(DownsamplingImageProcessor(size: PixelSize(width: 400, height: 300)).identifier
                == "com.alcedo.downsampling(400x300)")
        #expect(ResizingImageProcessor(referenceSize: PixelSize(width: 100, height: 100)).identifier
                == "com.alcedo.resizing(100x100,none)")
        #expect(ResizingImageProcessor(referenceSize: PixelSize(width: 100, height: 100), mode: .aspectFit).identifier
                == "com.alcedo.resizing(100x100,fit)")
    }

    @Test("equal parameters give equal identifiers, any changed parameter a different one")
    func identifiersFollowParameters() {
        #expect(BlurImageProcessor(blurRadius: 2).identifier == BlurImageProcessor(blurRadius: 2.0).identifier)
        #expect(BlurImageProcessor(blurRadius: 2).identifier != BlurImageProcessor(blurRadius: 2.5).identifier)
        let round = RoundCornerImageProcessor(radius: .point(4))
        #expect(round.identifier == RoundCornerImageProcessor(cornerRadius: 4).identifier)
        let variants: [any ImageProcessor] = [
            round,
            RoundCornerImageProcessor(radius: .point(5)),
            RoundCornerImageProcessor(radius: .widthFraction(4)),
            RoundCornerImageProcessor(radius: .heightFraction(4)),
            RoundCornerImageProcessor(radius: .point(4), roundingCorners: .topLeft),
            RoundCornerImageProcessor(radius: .point(4), backgroundColor: .black),
            BorderImageProcessor(border: 4),
            BorderImageProcessor(border: 4, color: .white),
            BorderImageProcessor(border: 4, cornerRadius: .point(1)),
            BorderImageProcessor(border: 4, roundingCorners: .bottomLeft),
            OverlayImageProcessor(overlay: .white, fraction: 0.25),
            OverlayImageProcessor(overlay: .black, fraction: 0.25),
            ColorControlsProcessor(brightness: 0.1),
            ColorControlsProcessor(contrast: 1.1),
            ColorControlsProcessor(saturation: 1.1),
            ColorControlsProcessor(inputEV: 0.1),
            BlendImageProcessor(blendMode: .darken),
            BlendImageProcessor(blendMode: .darken, alpha: 0.5),
            BlendImageProcessor(blendMode: .darken, backgroundColor: .white),
            CroppingImageProcessor(size: PixelSize(width: 4, height: 4)),
            CroppingImageProcessor(size: PixelSize(width: 4, height: 4), anchor: .topLeft),
            CroppingImageProcessor(size: PixelSize(width: 4, height: 5)),
            RoundCornerImageProcessor(radius: .point(4), targetSize: PixelSize(width: 4, height: 5)),
            ResizingImageProcessor(referenceSize: PixelSize(width: 4, height: 4)),
            ResizingImageProcessor(referenceSize: PixelSize(width: 4, height: 4), mode: .aspectFit),
            ResizingImageProcessor(referenceSize: PixelSize(width: 4, height: 4), mode: .aspectFill),
            DownsamplingImageProcessor(size: PixelSize(width: 4, height: 4)),
            DownsamplingImageProcessor(size: PixelSize(width: 4, height: 5)),
        ]
        let identifiers = variants.map(\.identifier)
        #expect(Set(identifiers).count == identifiers.count)
    }

    @Test("a |> b joins the identifiers and runs a, then b")
    func composition() throws {
        let image = Synthetic.gradient(width: 8, height: 6)
        let crop = CroppingImageProcessor(size: PixelSize(width: 5, height: 5), anchor: .topLeft)
        let round = RoundCornerImageProcessor(cornerRadius: 2)
        let blur = BlurImageProcessor(blurRadius: 0.8)
        let chain = crop |> round |> blur
        let downsample = DownsamplingImageProcessor(size: PixelSize(width: 4, height: 4))
        let thumbnail = downsample |> chain
        #expect(thumbnail.identifier == "com.alcedo.downsampling(4x4)|>\(chain.identifier)")
        #expect(thumbnail.decodingTarget?.size == downsample.size)
        #expect(try thumbnail.process(image) == chain.process(downsample.process(image)))
        #expect(chain.identifier == "\(crop.identifier)|>\(round.identifier)|>\(blur.identifier)")
        #expect(try chain.process(image) == blur.process(round.process(crop.process(image))))
        let reversed = round |> crop
        #expect(reversed.identifier == "\(round.identifier)|>\(crop.identifier)")
        #expect(try reversed.process(image) == crop.process(round.process(image)))
        #expect(try reversed.process(image) != chain.process(image))
    }

    @Test("the default processor vanishes from a composition")
    func compositionWithDefault() {
        let blur = BlurImageProcessor(blurRadius: 1)
        #expect((DefaultImageProcessor.default |> blur).identifier == blur.identifier)
        #expect((blur |> DefaultImageProcessor()).identifier == blur.identifier)
    }

    @Test("every processor processes every frame and keeps durations and loop count",
          arguments: processors.map { ProcessorCase($0) })
    func animated(_ processorCase: ProcessorCase) throws {
        let processor = processorCase.processor
        let image = Synthetic.animated(width: 6, height: 5)
        let result = try processor.process(image)
        #expect(result.frames.count == 3)
        #expect(result.frames.map(\.duration) == image.frames.map(\.duration))
        #expect(result.loopCount == 2)
        for index in 0..<3 {
            let alone = try processor.process(image.frame(at: index))
            #expect(result.frame(at: index) == alone, "frame \(index)")
        }
        #expect(result.frame(at: 0) != result.frame(at: 1))
    }

    @Test("every processor copes with 1x1, 1xN and Nx1 images", arguments: processors.map { ProcessorCase($0) })
    func oddSizes(_ processorCase: ProcessorCase) throws {
        for (width, height) in [(1, 1), (1, 7), (7, 1), (2, 3)] {
            let image = Synthetic.gradient(width: width, height: height)
            let result = try processorCase.processor.process(image)
            #expect(result.frames[0].pixels.count == result.width * result.height * 4)
        }
    }

    @Test("out-of-range parameters are typed errors naming the processor and the parameter")
    func invalidParameters() {
        let image = Synthetic.gradient(width: 4, height: 4)
        let cases: [(any ImageProcessor, String, String)] = [
            (RoundCornerImageProcessor(cornerRadius: -1), "RoundCornerImageProcessor", "radius"),
            (RoundCornerImageProcessor(radius: .widthFraction(1.5)), "RoundCornerImageProcessor", "radius"),
            (RoundCornerImageProcessor(radius: .heightFraction(-0.1)), "RoundCornerImageProcessor", "radius"),
            (RoundCornerImageProcessor(cornerRadius: .nan), "RoundCornerImageProcessor", "radius"),
            (BorderImageProcessor(border: -2), "BorderImageProcessor", "border width"),
            (BorderImageProcessor(border: .infinity), "BorderImageProcessor", "border width"),
            (BorderImageProcessor(border: 1, cornerRadius: .point(-3)), "BorderImageProcessor", "cornerRadius"),
            (BlurImageProcessor(blurRadius: -0.5), "BlurImageProcessor", "blurRadius"),
            (BlurImageProcessor(blurRadius: .nan), "BlurImageProcessor", "blurRadius"),
            (CroppingImageProcessor(size: PixelSize(width: 0, height: 3)), "CroppingImageProcessor", "size"),
            (CroppingImageProcessor(size: PixelSize(width: 3, height: -1)), "CroppingImageProcessor", "size"),
            (CroppingImageProcessor(size: PixelSize(width: 2, height: 2), anchor: .init(x: 1.2, y: 0)),
             "CroppingImageProcessor", "anchor.x"),
            (CroppingImageProcessor(size: PixelSize(width: 2, height: 2), anchor: .init(x: 0, y: -0.2)),
             "CroppingImageProcessor", "anchor.y"),
            (OverlayImageProcessor(overlay: .white, fraction: 1.01), "OverlayImageProcessor", "fraction"),
            (OverlayImageProcessor(overlay: .white, fraction: -1), "OverlayImageProcessor", "fraction"),
            (ColorControlsProcessor(contrast: -1), "ColorControlsProcessor", "contrast"),
            (ColorControlsProcessor(saturation: -0.1), "ColorControlsProcessor", "saturation"),
            (ColorControlsProcessor(brightness: .infinity), "ColorControlsProcessor", "brightness"),
            (ColorControlsProcessor(inputEV: .nan), "ColorControlsProcessor", "inputEV"),
            (BlendImageProcessor(blendMode: .normal, alpha: 2), "BlendImageProcessor", "alpha"),
        ]
        for (processor, name, parameter) in cases {
            let reason = invalidParameter { () throws(AlcedoError) in try processor.process(image) }
            #expect(reason?.processor == name, "\(processor.identifier)")
            #expect(reason?.message.contains(parameter) == true, "\(processor.identifier): \(reason?.message ?? "no error")")
        }
    }

    @Test("the error says which processor and parameter failed")
    func errorDescription() {
        do {
            _ = try BlurImageProcessor(blurRadius: -1).process(Synthetic.gradient(width: 2, height: 2))
            Issue.record("a negative blur radius was accepted")
        } catch {
            #expect(error.description == "processor error: BlurImageProcessor: blurRadius must be a finite number >= 0, got -1.0")
        }
    }
}

/// A processor as a test argument, named by its identifier.
struct ProcessorCase: CustomTestStringConvertible, Sendable {
    let processor: any ImageProcessor
    init(_ processor: any ImageProcessor) { self.processor = processor }
    var testDescription: String { processor.identifier }
}
