/// Convolves the image with a kernel, as thumbor's `convolution(items,columns,normalize)`
/// filter does: each channel is the sum of its neighbours weighted by the kernel (centred on
/// the pixel, edge pixels repeated outside), truncated toward zero and clamped. With
/// ``normalize`` the kernel is divided by its sum (when that is not 0). Alpha is convolved
/// too when the image has transparent pixels (thumbor's RGBA mode), else kept.
///
/// Identifier: `com.alcedo.convolution(<columns>,<normalize>,<items>)`.
public struct ConvolutionImageProcessor: ImageProcessor {
    /// The kernel's values, row by row.
    public let kernel: [Double]
    /// The kernel's columns; the rows are `kernel.count / columns`. Both must be odd.
    public let columns: Int
    /// Divide the kernel by its sum (default `true`).
    public let normalize: Bool

    /// Creates the processor.
    /// - Parameters:
    ///   - kernel: the values, row by row, finite; an odd number of rows and columns.
    ///   - columns: the number of columns, odd, dividing `kernel.count`.
    ///   - normalize: divide by the sum (default `true`).
    public init(kernel: [Double], columns: Int, normalize: Bool = true) {
        self.kernel = kernel
        self.columns = columns
        self.normalize = normalize
    }

    /// Whether `kernel` and `columns` make a kernel thumbor runs: odd rows and columns.
    public static func isValid(kernel: [Double], columns: Int) -> Bool {
        columns > 0 && !kernel.isEmpty && kernel.count % columns == 0 && columns % 2 == 1 && (kernel.count / columns) % 2 == 1
            && kernel.allSatisfy(\.isFinite)
    }

    /// `com.alcedo.convolution(<columns>,<normalize>,<items>)`.
    public var identifier: String {
        ProcessorSupport.identifier("convolution", [String(columns), String(normalize),
                                                     kernel.map(ProcessorSupport.number).joined(separator: ";")])
    }

    /// Convolves every frame. Throws `.invalidParameter` for a kernel without odd rows and columns.
    public func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        guard Self.isValid(kernel: kernel, columns: columns) else {
            throw ProcessorSupport.invalid("ConvolutionImageProcessor", "the kernel needs an odd number of rows and columns, got \(kernel.count) values in \(columns) columns")
        }
        let sum = kernel.reduce(0, +)
        let weights = normalize && sum != 0 ? kernel.map { $0 / sum } : kernel
        let width = image.width, height = image.height, columns = self.columns
        let midX = columns / 2, midY = kernel.count / columns / 2
        let channels = image.hasAlpha ? 4 : 3
        return image.mappingFrames { pixels in
            var out = pixels
            for y in 0..<height {
                for x in 0..<width {
                    var sums: (Double, Double, Double, Double) = (0, 0, 0, 0)
                    for ky in 0...(2 * midY) {
                        let row = max(0, min(height - 1, y + ky - midY)) * width
                        for kx in 0...(2 * midX) {
                            let index = (row + max(0, min(width - 1, x + kx - midX))) * 4
                            let weight = weights[ky * columns + kx]
                            sums.0 += Double(pixels[index]) * weight
                            sums.1 += Double(pixels[index + 1]) * weight
                            sums.2 += Double(pixels[index + 2]) * weight
                            sums.3 += Double(pixels[index + 3]) * weight
                        }
                    }
                    let target = (y * width + x) * 4
                    // Clamped as a Double (truncated toward zero): a kernel of huge weights gives ±∞
                    // or NaN here, which an integer conversion would trap on; NaN is 0.
                    func byte(_ value: Double) -> UInt8 { UInt8(value > 0 ? min(value, 255) : 0) }
                    out[target] = byte(sums.0)
                    out[target + 1] = byte(sums.1)
                    out[target + 2] = byte(sums.2)
                    if channels == 4 { out[target + 3] = byte(sums.3) }
                }
            }
            return out
        }
    }
}
