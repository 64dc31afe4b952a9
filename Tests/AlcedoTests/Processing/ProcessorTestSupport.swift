import Testing
@testable import Alcedo

/// Small synthetic images with known pixels, for the processor tests.
enum Synthetic {
    /// A `width` x `height` image whose pixel (x, y) is `pixel(x, y)`.
    static func image(width: Int, height: Int, _ pixel: (Int, Int) -> RGBA) -> AlcedoImage {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let p = pixel(x, y)
                bytes += [p.red, p.green, p.blue, p.alpha]
            }
        }
        return AlcedoImage(width: width, height: height, pixels: bytes)
    }

    /// A `width` x `height` image of one colour.
    static func solid(_ color: RGBA, width: Int, height: Int) -> AlcedoImage {
        image(width: width, height: height) { _, _ in color }
    }

    /// A pattern where every pixel differs: red = 30x + 7, green = 30y + 11, blue = 5(x + y), opaque.
    static func gradient(width: Int, height: Int) -> AlcedoImage {
        image(width: width, height: height) { x, y in
            RGBA(red: UInt8((30 * x + 7) % 256), green: UInt8((30 * y + 11) % 256), blue: UInt8(5 * (x + y) % 256))
        }
    }

    /// Three frames of `width` x `height` (different patterns), durations 0.1, 0.2, 0.3 s, loop count 2.
    static func animated(width: Int, height: Int) -> AlcedoImage {
        let frames = (0..<3).map { index in
            AlcedoImage.Frame(
                pixels: image(width: width, height: height) { x, y in
                    RGBA(red: UInt8(40 * index + 10 * x), green: UInt8(20 * y), blue: UInt8(200 - 50 * index),
                         alpha: UInt8(255 - 60 * ((x + y + index) % 3)))
                }.pixels,
                duration: 0.1 * Double(index + 1))
        }
        return AlcedoImage(width: width, height: height, frames: frames, loopCount: 2)
    }
}

/// The largest difference between two pixels over all four channels.
func channelDifference(_ a: RGBA, _ b: RGBA) -> Int {
    max(abs(Int(a.red) - Int(b.red)), abs(Int(a.green) - Int(b.green)),
        abs(Int(a.blue) - Int(b.blue)), abs(Int(a.alpha) - Int(b.alpha)))
}

/// The reason of the `.invalidParameter` error `body` throws, or `nil` when it throws
/// something else or nothing.
func invalidParameter(_ body: () throws(AlcedoError) -> AlcedoImage) -> (processor: String, message: String)? {
    do {
        _ = try body()
        return nil
    } catch {
        if case .invalidParameter(let processor, let message)? = error.processorCause { return (processor, message) }
        return nil
    }
}
