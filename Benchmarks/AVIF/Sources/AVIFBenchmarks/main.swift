import Alcedo
import Foundation

// Usage: AVIFBenchmarks PHOTO ANIMATION — what an AVIF result costs `alcedo serve` next to the
// WebP result it replaces, both encoded in this run from the same pixels, one thread each.
// Prints one JSON line per case: median milliseconds and bytes of WebP (q79, the server's WebP
// default) and of AVIF (q63, its AVIF default) at encoder speeds 6 to 10, and JPEG q80 for scale.
// Cases: PHOTO fitted in 512x512 (a typical served size), in 2048x2048 (cost per megapixel), and
// ANIMATION's frames fitted in 256x256 (an animated result). Last, the cost of smart gravity's
// analysis (SmartCrop) against resizing PHOTO to 400x300.

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

/// Median wall time in ms of `body` over enough runs to last about `budget` seconds (3 to 15 runs),
/// after one warm-up run; the last result is returned with it.
func measure<T>(budget: Double = 2, _ body: () throws -> T) rethrows -> (ms: Double, value: T) {
    let clock = ContinuousClock()
    var value = try body()
    var samples: [Double] = []
    let start = clock.now
    while samples.count < 3 || (samples.count < 15 && (clock.now - start) < .seconds(budget)) {
        let t0 = clock.now
        value = try body()
        let elapsed = clock.now - t0
        samples.append(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
    }
    return (median(samples), value)
}

func report(_ name: String, _ image: AlcedoImage) throws {
    var result: [String: Any] = ["case": name, "width": image.width, "height": image.height, "frames": image.frames.count]
    let webp = try measure { try WebPEncoder().encode(image, options: EncodingOptions(quality: 79)) }
    result["webp.ms"] = webp.ms
    result["webp.bytes"] = webp.value.count
    if image.frames.count == 1 {
        let jpeg = try measure { try JPEGEncoder().encode(image, options: EncodingOptions(quality: 80)) }
        result["jpeg.ms"] = jpeg.ms
        result["jpeg.bytes"] = jpeg.value.count
    }
    for speed in 6...10 {
        let avif = try measure { try AVIFEncoder(speed: speed).encode(image, options: EncodingOptions(quality: 63)) }
        result["avif\(speed).ms"] = avif.ms
        result["avif\(speed).bytes"] = avif.value.count
        result["avif\(speed)/webp"] = (avif.ms / webp.ms * 100).rounded() / 100
    }
    let json = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
    print(String(decoding: json, as: UTF8.self))
}

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: AVIFBenchmarks PHOTO ANIMATION\n".utf8))
    exit(2)
}
let registry = ImageCodecRegistry.shared
let photo = try registry.decode(Data(contentsOf: URL(fileURLWithPath: arguments.first!)))
for side in [512, 2048] {
    try report("photo\(side)", photo.resized(to: photo.size.fitting(in: PixelSize(width: side, height: side))))
}
let animation = try registry.decode(Data(contentsOf: URL(fileURLWithPath: arguments.last!)))
try report("animation256", animation.resized(to: animation.size.fitting(in: PixelSize(width: 256, height: 256))))

// Smart gravity's analysis (`g:sm`) next to the resize a served `fill` already does: on the
// full-size photo (a `crop` before resizing) and on a 400x300 result (a `fill` crop).
let resize = measure { photo.resized(to: PixelSize(width: 400, height: 300)) }.ms
for size in [photo.size, PixelSize(width: 400, height: 300)] {
    let image = size == photo.size ? photo : photo.resized(to: size)
    let square = PixelSize(width: size.height, height: size.height)
    let smart = measure { SmartCrop.origin(of: square, in: image) }.ms
    let result: [String: Any] = ["case": "smartcrop\(size.width)x\(size.height)", "smartcrop.ms": smart,
                                 "resize400.ms": resize, "smartcrop/resize400": (smart / resize * 100).rounded() / 100]
    print(String(decoding: try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys]), as: UTF8.self))
}
