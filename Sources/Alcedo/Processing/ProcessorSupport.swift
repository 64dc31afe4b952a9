/// Parameter checks and identifier formatting shared by the built-in processors.
///
/// Identifiers follow one scheme: `com.alcedo.<name>(<parameter>,<parameter>,…)`, numbers as
/// Swift prints a `Double` (`8.0`, `0.25`), sizes as `WxH`, colours as `#RRGGBBAA`, and `-` for
/// an absent optional parameter. Equal parameters give equal identifiers; any parameter that
/// changes the output changes the identifier.
enum ProcessorSupport {
    /// `com.alcedo.<name>(<parameters joined by commas>)`, or `com.alcedo.<name>` without parameters.
    static func identifier(_ name: String, _ parameters: [String] = []) -> String {
        parameters.isEmpty ? "com.alcedo.\(name)" : "com.alcedo.\(name)(\(parameters.joined(separator: ",")))"
    }

    /// A number as it appears in identifiers (`-0.0` is written `0.0`, so equal values print equally).
    static func number(_ value: Double) -> String {
        value == 0 ? "0.0" : "\(value)"
    }

    /// A colour as it appears in identifiers, or `-` when absent.
    static func color(_ color: RGBA?) -> String {
        guard let color else { return "-" }
        let hex = [color.red, color.green, color.blue, color.alpha].map { byte -> String in
            let digits = String(byte, radix: 16, uppercase: true)
            return digits.count == 1 ? "0" + digits : digits
        }
        return "#" + hex.joined()
    }

    /// A size as it appears in identifiers, or `-` when absent.
    static func size(_ size: PixelSize?) -> String {
        size.map { "\($0.width)x\($0.height)" } ?? "-"
    }

    /// The error for a parameter out of range.
    static func invalid(_ processor: String, _ message: String) -> AlcedoError {
        .processorError(reason: .invalidParameter(processor: processor, message: message))
    }

    /// Throws unless `value` is finite and at least 0.
    static func requireNonNegative(_ value: Double, _ name: String, in processor: String) throws(AlcedoError) {
        guard value.isFinite, value >= 0 else {
            throw invalid(processor, "\(name) must be a finite number >= 0, got \(value)")
        }
    }

    /// Throws unless `value` is finite.
    static func requireFinite(_ value: Double, _ name: String, in processor: String) throws(AlcedoError) {
        guard value.isFinite else { throw invalid(processor, "\(name) must be a finite number, got \(value)") }
    }

    /// Throws unless `value` is in `0...1`.
    static func requireFraction(_ value: Double, _ name: String, in processor: String) throws(AlcedoError) {
        guard value >= 0, value <= 1 else {
            throw invalid(processor, "\(name) must be in 0...1, got \(value)")
        }
    }

    /// Throws unless both sides of `size` are positive.
    static func requirePositive(_ size: PixelSize, _ name: String, in processor: String) throws(AlcedoError) {
        guard size.width > 0, size.height > 0 else {
            throw invalid(processor, "\(name) must have positive sides, got \(size)")
        }
    }

    /// Throws `.workingMemoryTooLarge` when resampling `source` to `target` would need more
    /// working memory (weight tables, filtered rows) than ``DecodingLimits/maxWorkingMemory``
    /// of ``DecodingLimits/default``: checked before anything is allocated. An extreme aspect
    /// ratio (1x100,000,000) is within the pixel limit but not within this one.
    static func requireResampling(from source: PixelSize, to target: PixelSize, window: PixelSize? = nil,
                                  in processor: String) throws(AlcedoError) {
        let limit = DecodingLimits.default.maxWorkingMemory
        let bytes = ResamplerPlan.workingMemory(from: source, to: target, window: window ?? target)
        if bytes > limit {
            throw .processorError(reason: .workingMemoryTooLarge(processor: processor, size: target, bytes: bytes, limit: limit))
        }
    }

    /// Throws `.outputTooLarge` when `frameCount` frames of `size` would be over the limits of
    /// ``DecodingLimits/default``: checked before any output is allocated.
    static func requireOutput(_ size: PixelSize, frameCount: Int, in processor: String) throws(AlcedoError) {
        let limits = DecodingLimits.default
        let (pixels, overflow) = size.width.multipliedReportingOverflow(by: size.height)
        if overflow || pixels > limits.maxPixelCount {
            throw .processorError(reason: .outputTooLarge(processor: processor, size: size, limit: limits.maxPixelCount))
        }
        let (bytes, bytesOverflow) = (pixels * 4).multipliedReportingOverflow(by: frameCount)
        if bytesOverflow || bytes > limits.maxTotalBytes {
            throw .processorError(reason: .outputTooLarge(processor: processor, size: size, limit: limits.maxTotalBytes))
        }
    }
}
