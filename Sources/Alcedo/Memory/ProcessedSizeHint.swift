/// The size a processor gives a decoded image of a given size (its
/// ``ImageProcessor/outputSize(for:)``), carried in ``DecodingOptions/processedSize`` so that
/// ``WorkingSetEstimate`` reserves for the result the processor really makes: no enlargement
/// unless the processor enlarges, a crop's or an extension's size where it has one.
///
/// Two hints are equal when their identifiers are: a processor's identifier names every
/// parameter that changes its output.
public struct ProcessedSizeHint: Sendable, Hashable, CustomStringConvertible {
    /// Names the sizing, as the processor's ``ImageProcessor/identifier`` does.
    public let identifier: String
    private let size: @Sendable (PixelSize) -> PixelSize
    private let intermediates: @Sendable (PixelSize) -> Int

    /// A hint that sizes results with `size`.
    /// - Parameters:
    ///   - identifier: names the sizing; equal identifiers must size alike.
    ///   - intermediateBytes: the bytes the processing holds besides its input and result, for
    ///     a decoded image of the given size (see ``ImageProcessor/intermediateBytes(for:)``;
    ///     default: none).
    ///   - size: the result's size for a decoded image of the given size.
    public init(identifier: String, intermediateBytes: @escaping @Sendable (PixelSize) -> Int = { _ in 0 },
                size: @escaping @Sendable (PixelSize) -> PixelSize) {
        self.identifier = identifier
        self.size = size
        self.intermediates = intermediateBytes
    }

    /// The hint of `processor`: its identifier, its ``ImageProcessor/outputSize(for:)`` and its
    /// ``ImageProcessor/intermediateBytes(for:)``.
    public init(_ processor: any ImageProcessor) {
        self.init(identifier: processor.identifier, intermediateBytes: { processor.intermediateBytes(for: $0) }) {
            processor.outputSize(for: $0)
        }
    }

    /// The bytes the processing holds besides its input and its result, for a decoded image of
    /// `input` (one frame; at least 0).
    public func intermediateBytes(for input: PixelSize) -> Int { max(0, intermediates(input)) }

    /// The result's size for a decoded image of `input` (each side at least 1).
    public func callAsFunction(_ input: PixelSize) -> PixelSize {
        let output = size(input)
        return PixelSize(width: max(1, output.width), height: max(1, output.height))
    }

    public static func == (lhs: ProcessedSizeHint, rhs: ProcessedSizeHint) -> Bool { lhs.identifier == rhs.identifier }

    public func hash(into hasher: inout Hasher) { hasher.combine(identifier) }

    public var description: String { "ProcessedSizeHint(\(identifier))" }
}
