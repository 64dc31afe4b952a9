import Foundation
import Testing
@testable import Alcedo

/// HEIC grid images and `irot`/`imir`/`clap` transforms: the files of
/// `Fixtures/avif-heif-generated` made by `make_heic_boxes.py` (HEVC tiles from heif-enc in
/// boxes written by the script), against the source pictures; their comparison with
/// heif-convert's decodes is in `HEIFDecoderTests.matchesHeifConvert`.
@Suite("HEIC grids and transforms")
struct HEICGridTransformTests {
    static func decode(_ name: String, options: DecodingOptions = .default) throws -> AlcedoImage {
        try HEIFDecoder().decode(AVIFHEIFFixtures.data(name), options: options)
    }

    static func expectTooManyPixels(_ name: String, limits: DecodingLimits = .default) throws {
        let data = try AVIFHEIFFixtures.data(name)
        do throws(AlcedoError) {
            _ = try HEIFDecoder().decode(data, options: DecodingOptions(limits: limits))
            Issue.record("\(name) passed the limits")
        } catch {
            guard case .decodingFailed(.tooManyPixels)? = error.processorCause else { Issue.record("\(name): expected tooManyPixels, got \(error)"); return }
        }
    }

    @Test("the grid's tiles land where they were in the source picture; a cropped grid is its top-left part")
    func tilesInPlace() throws {
        let source = try PNGDecoder().decode(AVIFHEIFFixtures.data("grid-source.png"), options: DecodingOptions(colorManagement: .ignore))
        for name in ["grid-2x2.heic", "grid-10bit.heic"] {
            let grid = try Self.decode(name)
            #expect(grid.width == 128 && grid.height == 128)
            #expect(AVIFHEIFFixtures.maxDifference(grid.pixels, source.pixels) <= 4, "\(name)")
            for (x, y) in [(32, 32), (96, 32), (32, 96), (96, 96)] {  // one point in every tile
                let (got, want) = (grid.pixel(x: x, y: y), source.pixel(x: x, y: y))
                #expect(abs(Int(got.red) - Int(want.red)) <= 4 && abs(Int(got.green) - Int(want.green)) <= 4
                        && abs(Int(got.blue) - Int(want.blue)) <= 4, "\(name): tile at (\(x), \(y))")
            }
        }
        let grid = try Self.decode("grid-2x2.heic")
        let cropped = try Self.decode("grid-cropped.heic")
        #expect(cropped.width == 120 && cropped.height == 100)
        var top = [UInt8]()
        for y in 0..<100 { top += grid.pixels[(y * 128 * 4)..<(y * 128 + 120) * 4] }
        #expect(AVIFHEIFFixtures.maxDifference(cropped.pixels, top) <= 2)
    }

    @Test("irot turns anti-clockwise, imir axis 0 flips top to bottom and 1 left to right, as libheif and heif-convert do",
          arguments: [("irot1", ImageOrientation.left), ("irot2", .down), ("irot3", .right), ("imir0", .downMirrored), ("imir1", .upMirrored)])
    func transforms(_ name: String, _ orientation: ImageOrientation) throws {
        let stored = try Self.decode("\(name).heic", options: DecodingOptions(appliesOrientation: false))
        let source = try PNGDecoder().decode(AVIFHEIFFixtures.data("transform-source.png"), options: DecodingOptions(colorManagement: .ignore))
        // With orientation off the picture is the stored one, whatever the transform.
        #expect(stored.width == 96 && stored.height == 64)
        #expect(AVIFHEIFFixtures.maxDifference(stored.pixels, source.pixels) <= 6)
        let image = try Self.decode("\(name).heic")
        let expected = orientation.apply(to: stored.pixels, width: stored.width, height: stored.height)
        #expect(image.width == expected.width && image.height == expected.height)
        #expect(AVIFHEIFFixtures.maxDifference(image.pixels, expected.pixels) <= 2)
    }

    @Test("the red marker of the stored top-left corner goes where the transform says")
    func marker() throws {
        func isMarker(_ image: AlcedoImage, _ x: Int, _ y: Int) -> Bool {
            let pixel = image.pixel(x: x, y: y)
            return pixel.red > 200 && pixel.green < 60 && pixel.blue < 60
        }
        #expect(isMarker(try Self.decode("irot1.heic"), 4, 91))   // 64x96, bottom-left
        #expect(isMarker(try Self.decode("irot2.heic"), 91, 59))  // 96x64, bottom-right
        #expect(isMarker(try Self.decode("irot3.heic"), 59, 4))   // 64x96, top-right
        #expect(isMarker(try Self.decode("imir0.heic"), 4, 59))   // bottom-left
        #expect(isMarker(try Self.decode("imir1.heic"), 91, 4))   // top-right
        #expect(isMarker(try Self.decode("irot1.heic", options: DecodingOptions(appliesOrientation: false)), 4, 4))
        // The turned grid: irot 1 then imir 0 moves the top-left (red) tile to the top-left
        // corner again, and the top-right (green) tile to the bottom-left.
        let grid = try Self.decode("grid-irot1-imir0.heic")
        #expect(grid.width == 100 && grid.height == 120)
        #expect(grid.pixel(x: 10, y: 10).red > 200 && grid.pixel(x: 10, y: 110).green > 150 && grid.pixel(x: 10, y: 110).red < 80)
    }

    @Test("info reports the turned size for irot 1 and 3, the stored one with orientation off, and the grid's output size")
    func info() throws {
        let sizes: [(String, Int, Int)] = [("irot1", 64, 96), ("irot2", 96, 64), ("irot3", 64, 96), ("imir0", 96, 64),
                                           ("clap", 80, 48), ("grid-2x2", 128, 128), ("grid-cropped", 120, 100),
                                           ("grid-irot1-imir0", 100, 120)]
        for (name, width, height) in sizes {
            let info = try HEIFDecoder().info(for: AVIFHEIFFixtures.data("\(name).heic"))
            #expect(info.width == width && info.height == height && info.format == .heic, "\(name)")
            #expect(!info.hasAlpha)
        }
        let stored = try HEIFDecoder().info(for: AVIFHEIFFixtures.data("irot1.heic"), options: DecodingOptions(appliesOrientation: false))
        #expect(stored.width == 96 && stored.height == 64)
        let storedGrid = try HEIFDecoder().info(for: AVIFHEIFFixtures.data("grid-irot1-imir0.heic"),
                                                options: DecodingOptions(appliesOrientation: false))
        #expect(storedGrid.width == 120 && storedGrid.height == 100)
    }

    @Test("the boxes are read for the sizes the file declares: ispe and the grid's ImageGrid")
    func declaredSizes() throws {
        typealias Size = HEIFDeclaredSizes.Size
        let cases: [(String, Size?, Size?)] = [
            ("grid-2x2.heic", Size(width: 128, height: 128), Size(width: 128, height: 128)),
            ("grid-cropped.heic", Size(width: 120, height: 100), Size(width: 120, height: 100)),
            ("grid-huge.heic", Size(width: 60000, height: 60000), Size(width: 60000, height: 60000)),
            ("grid-lying.heic", Size(width: 128, height: 128), Size(width: 30000, height: 30000)),
            ("irot1.heic", Size(width: 96, height: 64), nil),
            ("still.heic", Size(width: 40, height: 24), Size(width: 40, height: 24)),  // heif-enc wraps pictures under 64 pixels in a 1x1 grid
        ]
        for (name, ispe, grid) in cases {
            let sizes = HEIFDeclaredSizes(try AVIFHEIFFixtures.data(name))
            #expect(sizes == HEIFDeclaredSizes(spatialExtent: ispe, gridOutput: grid), "\(name)")
        }
        #expect(HEIFDeclaredSizes(Data([0, 0, 0, 8, 0x6D, 0x65, 0x74])) == nil)
    }

    @Test("limits are checked against the grid's declared output before libheif allocates it")
    func limits() throws {
        // ispe and ImageGrid say 60000x60000 (libheif itself would refuse it with an error of its own).
        try Self.expectTooManyPixels("grid-huge.heic")
        try Self.expectTooManyPixels("grid-2x2.heic", limits: DecodingLimits(maxPixelCount: 128 * 128 - 1))
        let exact = try Self.decode("grid-cropped.heic", options: DecodingOptions(limits: DecodingLimits(maxPixelCount: 120 * 100)))
        #expect(exact.width == 120)
    }

    @Test("info and decode agree on a grid whose ispe disagrees with its ImageGrid: both refuse it, with the same error",
          arguments: [("grid-ispe-mismatch.heic", "ispe size 128x128 disagrees with its ImageGrid output 120x100"),
                      // ImageGrid 30000x30000 and a broken first tile: were libheif started, it
                      // would allocate the grid and then report the broken tile.
                      ("grid-lying.heic", "ispe size 128x128 disagrees with its ImageGrid output 30000x30000")])
    func ispeGridMismatch(_ name: String, _ expected: String) throws {
        let data = try AVIFHEIFFixtures.data(name)
        func failure(_ body: () throws(AlcedoError) -> Void) -> AlcedoError? {
            do throws(AlcedoError) { try body() } catch { return error }
            return nil
        }
        let fromDecode = failure { () throws(AlcedoError) in _ = try HEIFDecoder().decode(data) }
        let fromInfo = failure { () throws(AlcedoError) in _ = try HEIFDecoder().info(for: data) }
        let stored = DecodingOptions(appliesOrientation: false)
        let fromStoredInfo = failure { () throws(AlcedoError) in _ = try HEIFDecoder().info(for: data, options: stored) }
        let fromRegistry = failure { () throws(AlcedoError) in _ = try ImageCodecRegistry.shared.info(for: data) }
        for error in [fromDecode, fromInfo, fromStoredInfo, fromRegistry] {
            guard case .decodingFailed(.invalidHeader(.heic, let message))? = (error)?.processorCause else {
                Issue.record("\(name): expected invalidHeader, got \(String(describing: error))")
                continue
            }
            #expect(message.contains(expected), "\(message)")
        }
        #expect(HEIFDeclaredSizes(data)?.gridMismatch?.contains(expected) == true)
        // The same grid with agreeing sizes: info reports what decode makes.
        let agreeing = try AVIFHEIFFixtures.data("grid-cropped.heic")
        let info = try HEIFDecoder().info(for: agreeing)
        let image = try HEIFDecoder().decode(agreeing)
        #expect(info.width == image.width && info.height == image.height)
    }

    @Test("grids whose dimg references loop back are refused before libheif recurses through them")
    func cycles() throws {
        let data = try AVIFHEIFFixtures.data("grid-cycle.heic")
        func failure(_ body: () throws(AlcedoError) -> Void) -> AlcedoError? {
            do throws(AlcedoError) { try body() } catch { return error }
            return nil
        }
        let errors = [failure { () throws(AlcedoError) in _ = try HEIFDecoder().decode(data) },
                      failure { () throws(AlcedoError) in _ = try HEIFDecoder().info(for: data) }]
        for error in errors {
            guard case .decodingFailed(.invalidHeader(_, let message))? = (error)?.processorCause else { Issue.record("expected invalidHeader, got \(String(describing: error))"); continue }
            #expect(message.contains("depends on itself"))
        }
        #expect(HEIFPreflight.derivationProblem([1: [2], 2: [1]]) == .cycle(item: 1))
        #expect(HEIFPreflight.derivationProblem([1: [1, 3]]) == .cycle(item: 1))
        #expect(HEIFPreflight.derivationProblem([5: [2, 3, 2, 3], 9: [5]]) == nil)  // a tile used twice, an iden over a grid
        let chain = Dictionary(uniqueKeysWithValues: (1...9).map { ($0, [$0 + 1]) })  // 9 derived items, 10 deep
        #expect(HEIFPreflight.derivationProblem(chain) == .tooDeep)
        #expect(HEIFPreflight.derivationProblem(chain.filter { $0.key > 1 }) == nil)
    }

    @Test("grids whose tiles leave part of the output unwritten (libheif would return uninitialised memory there) are refused",
          arguments: [("grid-uncovered.heic", "2x2 tiles of 64x64 do not cover the grid's 200x200 output"),
                      ("grid-tile-gap.heic", "decodes to 64x64, less than its ispe 100x100")])
    func uncoveredGrids(_ name: String, _ expected: String) throws {
        let data = try AVIFHEIFFixtures.data(name)
        do throws(AlcedoError) {
            let image = try HEIFDecoder().decode(data)
            Issue.record("\(name) decoded to \(image.width)x\(image.height)")
        } catch {
            guard case .decodingFailed(.invalidHeader(_, let message))? = error.processorCause else { Issue.record("expected invalidHeader, got \(error)"); return }
            #expect(message.contains(expected), "\(message)")
        }
    }

    @Test("files with more items than accepted are refused before libheif parses them")
    func itemCount() throws {
        let data = try AVIFHEIFFixtures.data("grid-2x2.heic")  // a grid and its four tiles
        try HEIFPreflight.check(data, limits: .default, format: .heic, maxItemCount: 5)
        do throws(AlcedoError) {
            try HEIFPreflight.check(data, limits: .default, format: .heic, maxItemCount: 4)
            Issue.record("five items passed a limit of four")
        } catch {
            guard case .decodingFailed(.unsupportedFeature(_, let message))? = error.processorCause else { Issue.record("\(error)"); return }
            #expect(message.contains("5 items"))
        }
        #expect(HEIFPreflight.maxItemCount == 4096)
    }

    @Test("iloc: zero-sized fields mean offset 0 and the whole idat; more than 32 extents are not read")
    func ilocExtents() {
        func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
            let size = UInt32(8 + payload.count)
            return [UInt8(size >> 24), UInt8(size >> 16 & 255), UInt8(size >> 8 & 255), UInt8(size & 255)] + Array(type.utf8) + payload
        }
        func file(extentCount: UInt8) -> Data {
            let infe = box("infe", [2, 0, 0, 0, 0, 1, 0, 0] + Array("grid".utf8) + [0])
            // iloc version 1: offset, length, base offset and index sizes 0; one item, method 1 (idat).
            let iloc = box("iloc", [1, 0, 0, 0, 0x00, 0x00, 0, 1, 0, 1, 0, 1, 0, 0, 0, extentCount])
            let meta = box("meta", [0, 0, 0, 0] + box("pitm", [0, 0, 0, 0, 0, 1]) + box("iinf", [0, 0, 0, 0, 0, 1] + infe)
                           + iloc + box("idat", [0, 0, 1, 1, 0x01, 0x2C, 0x00, 0xC8]))
            return Data(box("ftyp", Array("heicmif1".utf8)) + meta)
        }
        #expect(HEIFDeclaredSizes(file(extentCount: 1))?.gridOutput == HEIFDeclaredSizes.Size(width: 300, height: 200))
        #expect(HEIFDeclaredSizes(file(extentCount: 32))?.gridOutput == HEIFDeclaredSizes.Size(width: 300, height: 200))
        #expect(HEIFDeclaredSizes(file(extentCount: 33))?.gridOutput == nil)
    }

    @Test("the HEVC sequence parameter set reader: coded size less the conformance window, escapes removed")
    func sequenceParameters() {
        // hvcC with one SPS (from a 64x64 heif-enc tile): 8-bit 4:2:0, 64x64, no conformance window.
        let sps: [UInt8] = [0x42, 0x01, 0x01, 0x03, 0x70, 0x00, 0x00, 0x03, 0x00, 0x90, 0x00, 0x00, 0x03, 0x00, 0x00, 0x03,
                            0x00, 0x1e, 0xa0, 0x20, 0x81, 0x05, 0x96, 0xea, 0x49, 0x29, 0xae, 0x6e, 0x04, 0x04, 0x0c, 0x08,
                            0x00, 0x00, 0x03, 0x00, 0x08, 0x00, 0x00, 0x03, 0x00, 0x08, 0x40]
        let hvcC = [UInt8](repeating: 0, count: 22) + [1, 0x21, 0, 1, 0, UInt8(sps.count)] + sps
        let size = HEVCSequenceParameters.outputSize(hvcC: hvcC)
        #expect(size?.width == 64 && size?.height == 64)
        #expect(HEVCSequenceParameters.unescaped([0, 0, 3, 1, 0, 0, 3, 0, 3][...]) == [0, 0, 1, 0, 0, 0, 3])
        #expect(HEVCSequenceParameters.outputSize(hvcC: Array(hvcC.prefix(40))) == nil)
        #expect(HEVCSequenceParameters.outputSize(hvcC: [UInt8](repeating: 0, count: 23)) == nil)
    }

    @Test("prefixes and bit flips of grid, transformed and hostile files give typed errors, never a crash")
    func hostileInput() throws {
        for name in ["grid-2x2.heic", "grid-irot1-imir0.heic", "irot1.heic", "clap.heic", "grid-huge.heic", "grid-lying.heic",
                     "grid-cycle.heic", "grid-uncovered.heic", "grid-tile-gap.heic"] {
            AVIFHEIFFixtures.sweep(try AVIFHEIFFixtures.data(name), seed: 0x6121D) { bytes in
                _ = try? HEIFDecoder().decode(bytes)
                _ = try? HEIFDecoder().info(for: bytes)
                _ = HEIFDeclaredSizes(bytes)
            }
        }
    }
}
