import Foundation
import Testing
@testable import Alcedo

@Suite("ImageFormat sniffing")
struct ImageFormatTests {
    @Test("short inputs never read past their end", arguments: 0...3)
    func shortInputs(length: Int) {
        // Prefixes of every signature: none is long enough to be recognised.
        let signatures: [[UInt8]] = [
            [0x89, 0x50, 0x4E, 0x47], [0xFF, 0xD8, 0xFF, 0xE0], Array("GIF89a".utf8), Array("RIFF".utf8),
            [0x49, 0x49, 0x2A, 0x00], Array("BM".utf8) + [0, 0], [0, 0, 1, 0], Array("<svg".utf8),
        ]
        for signature in signatures {
            let prefix = Data(signature.prefix(length))
            let format = ImageFormat.sniff(prefix)
            if length == 3 && signature.starts(with: [0xFF, 0xD8, 0xFF]) {
                #expect(format == .jpeg)
            } else {
                #expect(format == .unknown, "\(signature.prefix(length)) sniffed as \(format)")
            }
        }
    }

    @Test("fixtures are recognised")
    func fixtures() throws {
        #expect(ImageFormat.sniff(try Fixtures.data("libjpeg-turbo/testorig.jpg")) == .jpeg)
        #expect(ImageFormat.sniff(try Fixtures.data("libjpeg-turbo/testimgari.jpg")) == .jpeg)
        #expect(ImageFormat.sniff(try Fixtures.data("giflib/pic/fire.gif")) == .gif)
        #expect(ImageFormat.sniff(try Fixtures.data("libwebp/test.webp")) == .webp)
        #expect(ImageFormat.sniff(try Fixtures.data("go-image/image-testdata/video-001.png")) == .png)
        // giflib's sample.ico is its own text format for icons, not a Windows icon.
        #expect(ImageFormat.sniff(try Fixtures.data("giflib/pic/sample.ico")) == .unknown)
        #expect(ImageFormat.webPVariant(of: try Fixtures.data("libwebp/test.webp")) == .lossy)
    }

    @Test("synthetic signatures")
    func synthetic() {
        func sniff(_ bytes: [UInt8]) -> ImageFormat { ImageFormat.sniff(Data(bytes)) }
        let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        let ihdr: [UInt8] = [0, 0, 0, 13] + Array("IHDR".utf8) + [UInt8](repeating: 0, count: 17)
        let actl: [UInt8] = [0, 0, 0, 8] + Array("acTL".utf8) + [UInt8](repeating: 0, count: 12)
        let idat: [UInt8] = [0, 0, 0, 0] + Array("IDAT".utf8) + [0, 0, 0, 0]
        #expect(sniff(pngSignature + ihdr + idat) == .png)
        #expect(sniff(pngSignature + ihdr + actl + idat) == .apng)
        #expect(sniff(pngSignature + ihdr + idat + actl) == .png)
        // A chunk length that points far past the end stops the scan safely.
        #expect(sniff(pngSignature + [0xFF, 0xFF, 0xFF, 0xFF] + Array("tEXt".utf8)) == .png)
        #expect(sniff(Array("GIF87a".utf8)) == .gif)
        #expect(sniff(Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WEBPVP8L".utf8)) == .webp)
        #expect(sniff(Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WAVE".utf8)) == .unknown)
        #expect(sniff([0x4D, 0x4D, 0x00, 0x2A]) == .tiff)
        #expect(sniff(Array("BM".utf8) + [UInt8](repeating: 0, count: 12) + [40, 0, 0, 0]) == .bmp)
        #expect(sniff(Array("BMW is a car brand, not a bitmap".utf8)) == .unknown)
        #expect(sniff([0, 0, 1, 0, 1, 0]) == .ico)
        func ftyp(_ major: String, _ compatible: [String]) -> [UInt8] {
            let body = Array(major.utf8) + [0, 0, 0, 0] + compatible.flatMap { Array($0.utf8) }
            let size = 8 + body.count
            return [0, 0, 0, UInt8(size)] + Array("ftyp".utf8) + body
        }
        #expect(sniff(ftyp("avif", ["mif1", "miaf"])) == .avif)
        #expect(sniff(ftyp("mif1", ["avif"])) == .avif)
        #expect(sniff(ftyp("heic", ["mif1"])) == .heic)
        #expect(sniff(ftyp("mif1", ["heic"])) == .heic)
        #expect(sniff(ftyp("mif1", ["miaf"])) == .heif)
        #expect(sniff(ftyp("isom", ["mp41"])) == .unknown)
        // A box size smaller than the header does not crash.
        #expect(sniff([0, 0, 0, 1] + Array("ftypavif".utf8)) == .avif)
        #expect(sniff(Array("<svg xmlns=\"http://www.w3.org/2000/svg\"/>".utf8)) == .svg)
        #expect(sniff(Array("\u{FEFF}<?xml version=\"1.0\"?>\n<!-- c -->\n<!DOCTYPE svg>\n<svg>".utf8)) == .svg)
        #expect(sniff(Array("<svgx>".utf8)) == .unknown)
        #expect(sniff(Array("<html><body>not an image</body></html>".utf8)) == .unknown)
        #expect(sniff(Array("<?xml never closed".utf8)) == .unknown)
        #expect(sniff(Array("{\"error\": \"not found\"}".utf8)) == .unknown)
    }

    @Test("WebP variants")
    func webPVariants() {
        func webp(_ fourCC: String, flags: UInt8 = 0) -> Data {
            Data(Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WEBP".utf8) + Array(fourCC.utf8) + [10, 0, 0, 0, flags, 0, 0, 0, 0, 0])
        }
        #expect(ImageFormat.webPVariant(of: webp("VP8 ")) == .lossy)
        #expect(ImageFormat.webPVariant(of: webp("VP8L")) == .lossless)
        #expect(ImageFormat.webPVariant(of: webp("VP8X")) == .extended)
        #expect(ImageFormat.webPVariant(of: webp("VP8X", flags: 0x02)) == .animated)
        #expect(ImageFormat.webPVariant(of: Data("RIFF".utf8)) == nil)
    }

    @Test("file extensions")
    func extensions() {
        #expect(ImageFormat(fileExtension: "JPG") == .jpeg)
        #expect(ImageFormat(fileExtension: "webp") == .webp)
        #expect(ImageFormat(fileExtension: "txt") == nil)
        #expect(ImageFormat.jpeg.preferredFileExtension == "jpg")
    }
}
