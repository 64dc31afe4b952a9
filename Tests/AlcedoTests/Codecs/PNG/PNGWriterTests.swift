import AlcedoTestSupport
import Foundation
import Testing
@testable import Alcedo

/// Alcedo's own PNG writer (rows filtered by Alcedo, deflate by libdeflate): every filter,
/// interlacing and palette output decode back as written, by libpng and by a reference tool.
@Suite("PNG writer")
struct PNGWriterTests {
    /// A picture with smooth areas, edges and noise, in every channel.
    static func picture(width: Int, height: Int, alpha: Bool) -> [UInt8] {
        var generator = SeededRandom(seed: UInt64(width * 31 + height))
        var out = [UInt8]()
        out.reserveCapacity(width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let noise = UInt8(truncatingIfNeeded: generator.next() & 7)
                let r = UInt8((x * 255) / max(1, width - 1)) &+ noise
                let g: UInt8 = (x / 7 + y / 5) % 2 == 0 ? 30 : 220
                let b = UInt8((y * 255) / max(1, height - 1))
                out += [r, g, b, alpha ? UInt8((x + y) % 256) : 255]
            }
        }
        return out
    }

    @Test("every filter and both orders of rows give back the exact pixels",
          arguments: PNGEncoder.Filter.allCases, [false, true])
    func roundTrip(filter: PNGEncoder.Filter, interlaced: Bool) throws {
        // Sizes that leave Adam7 passes empty (1 and 2 pixels) and odd ones.
        for (width, height) in [(1, 1), (2, 3), (5, 1), (37, 23), (64, 65)] {
            for alpha in [false, true] {
                let pixels = Self.picture(width: width, height: height, alpha: alpha)
                let image = AlcedoImage(width: width, height: height, pixels: pixels)
                let png = try PNGEncoder(interlaced: interlaced, filter: filter).encode(image)
                #expect([UInt8](png)[28] == (interlaced ? 1 : 0))
                let decoded = try PNGDecoder().decode(png, options: .default)
                #expect(decoded.pixels == pixels, "\(width)x\(height) alpha \(alpha) \(filter) interlaced \(interlaced)")
            }
        }
    }

    @Test("each compression level decodes to the same pixels; higher levels are not larger on a photo-like picture")
    func levels() throws {
        let pixels = Self.picture(width: 300, height: 200, alpha: false)
        let image = AlcedoImage(width: 300, height: 200, pixels: pixels)
        var sizes: [Int] = []
        for level in 0...9 {
            let png = try PNGEncoder(compressionLevel: level, filter: .adaptive).encode(image)
            #expect(try PNGDecoder().decode(png, options: .default).pixels == pixels)
            sizes.append(png.count)
        }
        #expect(sizes[0] > sizes[1] && sizes[1] >= sizes[9], "\(sizes)")
        #expect(throws: AlcedoError.self) { try PNGEncoder(compressionLevel: 10).encode(image) }
        #expect(throws: AlcedoError.self) { try PNGEncoder(compressionLevel: -1).encode(image) }
    }

    @Test("auto picks no filter for flat colours and the adaptive filter for gradients, never larger than both by much")
    func autoFilter() throws {
        // Flat: a few solid rectangles (a screenshot); graded: noise on gradients (a photo).
        var flat = [UInt8]()
        for y in 0..<256 { for x in 0..<256 { flat += (x / 64 + y / 32) % 3 == 0 ? [250, 250, 250, 255] : [20, 90, 200, 255] } }
        let graded = Self.picture(width: 256, height: 256, alpha: false)
        for pixels in [flat, graded] {
            let image = AlcedoImage(width: 256, height: 256, pixels: pixels)
            let auto = try PNGEncoder().encode(image).count
            let none = try PNGEncoder(filter: .none).encode(image).count
            let adaptive = try PNGEncoder(filter: .adaptive).encode(image).count
            #expect(Double(auto) <= Double(min(none, adaptive)) * 1.1, "auto \(auto), none \(none), adaptive \(adaptive)")
        }
    }

    @Test("quantized output is a palette image of at most the asked colours; transparency becomes a tRNS entry")
    func quantized() throws {
        let pixels = Self.picture(width: 64, height: 48, alpha: true)
        let image = AlcedoImage(width: 64, height: 48, pixels: pixels)
        for colors in [2, 16, 256] {
            let png = try PNGEncoder(quantizes: true, quantizationColors: colors).encode(image)
            #expect([UInt8](png)[25] == 3)
            #expect(png.range(of: Data("tRNS".utf8)) != nil)
            let decoded = try PNGDecoder().decode(png, options: .default).pixels
            var seen = Set<UInt32>()
            for index in stride(from: 0, to: decoded.count, by: 4) where decoded[index + 3] != 0 {
                seen.insert(UInt32(decoded[index]) << 16 | UInt32(decoded[index + 1]) << 8 | UInt32(decoded[index + 2]))
                #expect(decoded[index + 3] == 255)
            }
            #expect(seen.count <= colors)
        }
        // Few colours: the palette is exact and the image comes back as it was.
        var few = [UInt8]()
        for index in 0..<(40 * 30) { few += index % 3 == 0 ? [255, 0, 0, 255] : [0, 0, 255, 255] }
        let exact = AlcedoImage(width: 40, height: 30, pixels: few)
        let png = try PNGEncoder(quantizes: true, quantizationColors: 4).encode(exact)
        #expect(try PNGDecoder().decode(png, options: .default).pixels == few)
        #expect(png.range(of: Data("tRNS".utf8)) == nil)
        #expect(throws: AlcedoError.self) { try PNGEncoder(quantizes: true, quantizationColors: 1).encode(exact) }
    }

    @Test("Pillow reads every kind of file the writer makes with the same pixels")
    func referenceDecoder() throws {
        // Pillow comes with thumbor into the test virtual environment (scripts/install-s3-test-tools.sh).
        let python = MotoS3Server.python
        try #require(FileManager.default.isExecutableFile(atPath: python.path), "no \(python.path): run scripts/install-s3-test-tools.sh")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-png-writer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let pixels = Self.picture(width: 33, height: 17, alpha: true)
        let image = AlcedoImage(width: 33, height: 17, pixels: pixels)
        var names: [String] = []
        for (name, encoder) in [("auto", PNGEncoder()), ("interlaced", PNGEncoder(interlaced: true)),
                                ("rgb", PNGEncoder(filter: .paeth)), ("palette", PNGEncoder(quantizes: true, quantizationColors: 256))] {
            var source = image
            if name == "rgb" { source = AlcedoImage(width: 33, height: 17, pixels: Self.picture(width: 33, height: 17, alpha: false)) }
            try encoder.encode(source).write(to: folder.appendingPathComponent(name + ".png"))
            try Data(source.pixels).write(to: folder.appendingPathComponent(name + ".rgba"))
            names.append(name)
        }
        let script = """
        import sys
        from PIL import Image
        folder = sys.argv[1]
        for name in sys.argv[2:]:
            image = Image.open(f"{folder}/{name}.png"); image.load()
            expected = open(f"{folder}/{name}.rgba", "rb").read()
            got = image.convert("RGBA").tobytes()
            if name == "palette":
                # Quantized: alpha on or off, colours within the palette's reach.
                ok = all((got[i + 3] == 255) == (expected[i + 3] >= 128) for i in range(0, len(got), 4))
            else:
                ok = got == expected
            print(name, "ok" if ok else "differs")
        """
        let process = Process()
        process.executableURL = python
        process.arguments = ["-c", script, folder.path] + names
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        for name in names { #expect(output.contains("\(name) ok"), "\(output)") }
    }
}
