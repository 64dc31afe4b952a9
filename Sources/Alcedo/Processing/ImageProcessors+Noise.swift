/// Adds noise as thumbor's `noise(amount[,seed])` filter does: one random value per pixel,
/// uniform in `-(amount/2)...(amount - 1 - amount/2)` (integer halves), added to red, green and
/// blue alike and clamped; alpha is kept. The values come from the C library's `random()`
/// sequence after `srandom(seed)` (glibc's additive feedback generator, written out here so the
/// same seed gives the same noise on every platform, and thumbor's own for that seed).
///
/// Identifier: `com.alcedo.noise(<amount>,<seed>)`.
public struct NoiseImageProcessor: ImageProcessor {
    /// The width of the noise's range (0: unchanged).
    public let amount: Int
    /// The generator's seed (thumbor's `seed`; 0 is taken as 1, the C library's initial state).
    public let seed: UInt32

    /// Creates the processor.
    /// - Parameters:
    ///   - amount: the width of the range of the values added, 0 or more (0: unchanged).
    ///   - seed: the seed of the sequence (default 0, the same as 1).
    public init(amount: Int, seed: UInt32 = 0) {
        self.amount = amount
        self.seed = seed
    }

    /// `com.alcedo.noise(<amount>,<seed>)`.
    public var identifier: String {
        ProcessorSupport.identifier("noise", [String(amount), String(seed == 0 ? 1 : seed)])
    }

    /// Adds the noise to every frame, the sequence starting again for each. Throws
    /// `.invalidParameter` for a negative amount.
    public func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        try ProcessorSupport.requireNonNegative(Double(amount), "amount", in: "NoiseImageProcessor")
        guard amount > 0 else { return image }
        let amount = self.amount, seed = self.seed
        return image.mappingFrames { pixels in
            var generator = CRandom(seed: seed)
            var out = pixels
            var index = 0
            while index + 3 < out.count {
                let value = Int(generator.next() % UInt32(amount)) - (amount >> 1)
                for c in 0..<3 { out[index + c] = UInt8(max(0, min(255, Int(out[index + c]) + value))) }
                index += 4
            }
            return out
        }
    }

    /// glibc's `random()` (TYPE_3: x[i] = x[i-3] + x[i-31], the first 310 outputs dropped) after `srandom(seed)`.
    struct CRandom {
        private var state = [UInt32](repeating: 0, count: 34)
        private var position = 0

        init(seed: UInt32) {
            var r = [Int32](repeating: 0, count: 34)
            r[0] = Int32(bitPattern: seed == 0 ? 1 : seed)
            for i in 1..<31 {
                // 16807 * r[i-1] % 2147483647 by Schrage's method, as glibc computes it.
                let hi = Int64(r[i - 1]) / 127_773, lo = Int64(r[i - 1]) % 127_773
                var word = 16_807 * lo - 2_836 * hi
                if word < 0 { word += 2_147_483_647 }
                r[i] = Int32(word)
            }
            for i in 31..<34 { r[i] = r[i - 31] }
            state = r.map { UInt32(bitPattern: $0) }
            position = 34
            for _ in 34..<344 { _ = step() }
        }

        private mutating func step() -> UInt32 {
            // A ring of the last 34 values: x[i] = x[i-31] + x[i-3].
            let value = state[(position - 31) % 34] &+ state[(position - 3) % 34]
            state[position % 34] = value
            position += 1
            return value
        }

        mutating func next() -> UInt32 { step() >> 1 }
    }
}
