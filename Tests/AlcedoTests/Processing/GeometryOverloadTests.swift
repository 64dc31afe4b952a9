import Foundation
import Testing
@testable import Alcedo

/// Foundation's `CGSize`/`CGPoint` next to `PixelSize`, and `.scaleFactor`.
@Suite("CGSize, CGPoint and scale factor")
struct GeometryOverloadTests {
    @Test func cgSizeFormsMatchThePixelSizeForms() {
        #expect(DownsamplingImageProcessor(size: CGSize(width: 120, height: 80)).identifier
            == DownsamplingImageProcessor(size: PixelSize(width: 120, height: 80)).identifier)
        #expect(ResizingImageProcessor(referenceSize: CGSize(width: 50, height: 40), mode: .aspectFit).identifier
            == ResizingImageProcessor(referenceSize: PixelSize(width: 50, height: 40), mode: .aspectFit).identifier)
        #expect(CroppingImageProcessor(size: CGSize(width: 20, height: 10), anchor: CGPoint(x: 0, y: 1)).identifier
            == CroppingImageProcessor(size: PixelSize(width: 20, height: 10), anchor: .bottomLeft).identifier)
        #expect(CroppingImageProcessor(size: CGSize(width: 20, height: 10)).identifier
            == CroppingImageProcessor(size: PixelSize(width: 20, height: 10)).identifier)
        #expect(RoundCornerImageProcessor(cornerRadius: 8, targetSize: CGSize(width: 64, height: 64)).identifier
            == RoundCornerImageProcessor(cornerRadius: 8, targetSize: PixelSize(width: 64, height: 64)).identifier)
        #expect(PixelSize(CGSize(width: 10.4, height: 10.6)) == PixelSize(width: 10, height: 11))
        #expect(PixelSize(CGSize(width: -3, height: CGFloat.nan)) == PixelSize(width: 0, height: 0))
        #expect(PixelSize(width: 3, height: 4).cgSize == CGSize(width: 3, height: 4))
    }

    @Test func cgSizeProcessorsProcess() throws {
        let image = TestImages.image(width: 40, height: 20)
        #expect(try DownsamplingImageProcessor(size: CGSize(width: 10, height: 10)).process(image).pixelSize == PixelSize(width: 10, height: 5))
        #expect(try CroppingImageProcessor(size: CGSize(width: 8, height: 8), anchor: CGPoint(x: 0.5, y: 0.5)).process(image).pixelSize
            == PixelSize(width: 8, height: 8))
        #expect(throws: AlcedoError.self) { try DownsamplingImageProcessor(size: CGSize(width: 0, height: 10)).process(image) }
    }

    @Test func kfBuilderTakesCGSizes() {
        let builder = KF.url(URL(string: "https://example.com/a.jpg"))
            .downsampling(size: CGSize(width: 100, height: 100))
            .cropping(size: CGSize(width: 50, height: 50))
            .roundCorner(radius: .point(6), targetSize: CGSize(width: 40, height: 40))
        #expect(builder.processor.identifier == "com.alcedo.downsampling(100x100)|>com.alcedo.cropping(50x50,0.5,0.5)|>com.alcedo.roundcorner(6.0,all,40x40,-)")
    }

    @Test func scaleFactorScalesPointSizedProcessors() {
        let chain = DownsamplingImageProcessor(size: CGSize(width: 100, height: 50))
            |> RoundCornerImageProcessor(cornerRadius: 5, targetSize: CGSize(width: 10, height: 10))
        let parsed = AlcedoParsedOptionsInfo([.processor(chain), .scaleFactor(2)])
        #expect(parsed.processor.identifier == "com.alcedo.downsampling(200x100)|>com.alcedo.roundcorner(10.0,all,20x20,-)")
        #expect(parsed.processor.decodingTarget?.size == PixelSize(width: 200, height: 100))
        // The order of the options does not matter; 1 and custom processors are left alone.
        #expect(AlcedoParsedOptionsInfo([.scaleFactor(3), .processor(ResizingImageProcessor(referenceSize: CGSize(width: 10, height: 20)))])
            .processor.identifier == "com.alcedo.resizing(30x60,none)")
        #expect(AlcedoParsedOptionsInfo([.processor(chain), .scaleFactor(1)]).processor.identifier == chain.identifier)
        let custom = InvertingCountingProcessor(name: "c", runs: Counter())
        #expect(AlcedoParsedOptionsInfo([.processor(custom), .scaleFactor(2)]).processor.identifier == custom.identifier)
    }

    @Test func scaleFactorChangesWhatTheManagerDelivers() async throws {
        try await withPipeline { h in
            h.server.route("/big.jpg", .ok(TestImages.jpeg(width: 400, height: 200)))
            let options: AlcedoOptionsInfo = [.processor(DownsamplingImageProcessor(size: CGSize(width: 50, height: 50))), .scaleFactor(2)]
            let result = try await h.manager.retrieveImage(with: h.server.url("/big.jpg"), options: options)
            #expect(result.image.pixelSize == PixelSize(width: 100, height: 50))
        }
    }
}
