import Alcedo
import Foundation

// Usage: CodecBenchmarks FILE... — for each file prints one JSON line of median milliseconds:
// full decode, decodes at 1/2, 1/4, 1/8 (decoder-side scaling), a 256x256 thumbnail
// (decoder scaling + resampler), and a full decode + resize without decoder scaling. For a file
// with a colour profile, also the thumbnail without colour management (`thumb256.unmanaged`).

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

/// Median wall time in ms of `body` over enough runs to last about `budget` seconds (3 to 25 runs).
func measure(budget: Double = 1.5, _ body: () throws -> Void) rethrows -> Double {
    let clock = ContinuousClock()
    var samples: [Double] = []
    let start = clock.now
    while samples.count < 3 || (samples.count < 25 && (clock.now - start) < .seconds(budget)) {
        let t0 = clock.now
        try body()
        let elapsed = clock.now - t0
        samples.append(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
    }
    return median(samples)
}

let registry = ImageCodecRegistry.shared
let thumb = PixelSize(width: 256, height: 256)
var failed = false

// `CodecBenchmarks --png-encode FILE.png...`: for each file, the median time of writing it with
// PNGEncoder's defaults (the decode is not timed) and the bytes written, one JSON line each.
if CommandLine.arguments.dropFirst().first == "--png-encode" {
    for path in CommandLine.arguments.dropFirst(2) {
        do {
            let image = try registry.decode(try Data(contentsOf: URL(fileURLWithPath: path)))
            var bytes = 0
            let milliseconds = try measure { bytes = try PNGEncoder().encode(image).count }
            let result: [String: Any] = ["file": (path as NSString).lastPathComponent, "encode": milliseconds, "bytes": bytes]
            print(String(decoding: try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys]), as: UTF8.self))
        } catch {
            FileHandle.standardError.write(Data("CodecBenchmarks: \(path): \(error)\n".utf8))
            failed = true
        }
    }
    exit(failed ? 1 : 0)
}

for path in CommandLine.arguments.dropFirst() {
    do {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let info = try registry.info(for: data)
        let size = PixelSize(width: info.width, height: info.height)
        var result: [String: Any] = ["file": (path as NSString).lastPathComponent, "format": info.format.rawValue,
                                     "width": info.width, "height": info.height, "frames": info.frameCount]
        result["full"] = try measure { _ = try registry.decode(data) }
        if info.frameCount == 1 {
            for denominator in [2, 4, 8] {
                let target = PixelSize(width: max(1, info.width / denominator), height: max(1, info.height / denominator))
                result["scale1/\(denominator)"] = try measure {
                    _ = try registry.decode(data, options: DecodingOptions(targetSize: target))
                }
            }
        }
        let fitted = size.fitting(in: thumb)
        result["thumb256"] = try measure {
            let image = try registry.decode(data, options: DecodingOptions(targetSize: thumb, contentMode: .aspectFit))
            _ = image.resized(to: fitted)
        }
        if info.colorProfile != nil {
            // The same thumbnail without colour management: the cost of the sRGB conversion.
            result["thumb256.unmanaged"] = try measure {
                let options = DecodingOptions(targetSize: thumb, contentMode: .aspectFit, colorManagement: .ignore)
                _ = try registry.decode(data, options: options).resized(to: fitted)
            }
        }
        result["fullPlusResize256"] = try measure {
            _ = try registry.decode(data).resized(to: fitted)
        }
        let json = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
        print(String(decoding: json, as: UTF8.self))
    } catch {
        FileHandle.standardError.write(Data("CodecBenchmarks: \(path): \(error)\n".utf8))
        failed = true
    }
}
exit(failed ? 1 : 0)
