import Alcedo
import Foundation

/// Small limits so the fuzzer explores parsers rather than allocating huge canvases.
private let limits = DecodingLimits(maxPixelCount: 4_000_000, maxFrameCount: 64, maxTotalBytes: 64 << 20)

/// libFuzzer's entry point: every input must give an image or a typed error, never a crash.
/// The first byte chooses the options (target size, first frame only, truncated allowed, TIFF
/// page and icon size), so
/// the scaled decode paths are explored too.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDecode(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start, count > 1 else { return 0 }
    let selector = start[0]
    let data = Data(bytes: start + 1, count: count - 1)
    var options = DecodingOptions(limits: limits)
    if selector & 1 != 0 { options.targetSize = PixelSize(width: Int(selector >> 4) * 8 + 1, height: Int(selector >> 4) * 6 + 1) }
    options.firstFrameOnly = selector & 2 != 0
    options.allowTruncated = selector & 4 != 0
    // A second TIFF page, and an icon entry picked by size.
    if selector & 8 != 0 {
        options.page = 1
        options.preferredIconSize = PixelSize(width: 16, height: 16)
    }
    _ = try? ImageCodecRegistry.shared.info(for: data, options: options)
    if ImageFormat.sniff(data) == .svg { _ = SVGSanitizer.sanitize(data) }
    if let image = try? ImageCodecRegistry.shared.decode(data, options: options) {
        precondition(image.frames.allSatisfy { $0.pixels.count == image.width * image.height * 4 })
    }
    return 0
}

/// libFuzzer's driver (exported by the fuzzer runtime that `-sanitize=fuzzer` links in).
@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// SwiftPM links an executable's entry point as `<module>_main`; hand control to libFuzzer.
@_cdecl("AlcedoFuzz_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments, fuzzDecode)
}
