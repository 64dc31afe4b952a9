#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How long one step of a processing run took: one processor of a `|>` chain, or a step a
/// processor times itself with ``ProcessingStepClock``.
public struct ProcessingStepTime: Sendable, Hashable, CustomStringConvertible {
    /// The step's name: `resize`, `round_corner`, `watermark`… (see ``ProcessingStepClock/stepName(of:)``).
    public var name: String
    /// How long it took.
    public var duration: Duration

    /// A step named `name` that took `duration`.
    public init(name: String, duration: Duration) {
        self.name = name
        self.duration = duration
    }

    public var description: String { "\(name) \(duration.alcedoMilliseconds)" }
}

/// Times the steps of a processor while it runs, for ``RetrieveImageMetrics/processingSteps``.
///
/// The pipeline times each processor of a `|>` chain by itself. A processor that does several
/// things (a proxy's resize, then a watermark, then a blur) can report them apart: make a clock
/// when `process(_:)` starts and call ``lap(_:)`` after each step. Outside a timed run (a
/// processor called directly) the clock does nothing and costs one task-local read.
///
/// ```swift
/// func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
///     var steps = ProcessingStepClock()
///     var image = image.resized(to: size)
///     steps.lap("resize")
///     image = try BlurImageProcessor(blurRadius: 2).process(image)
///     steps.lap("blur")
///     return image
/// }
/// ```
public struct ProcessingStepClock {
    /// Where the steps of the current run go; `nil` outside a timed run.
    @TaskLocal static var recorder: Recorder?

    /// The steps of one processing run. A run is one call on one thread, so the recorder is
    /// not shared between threads while it fills.
    final class Recorder: @unchecked Sendable {
        var steps: [ProcessingStepTime] = []
    }

    private let recorder: Recorder?
    private var last: ContinuousClock.Instant?

    /// A clock started now; it records only inside a timed run.
    public init() {
        recorder = Self.recorder
        last = recorder == nil ? nil : .now
    }

    /// Records the time since the clock started (or since the previous lap) as the step `name`,
    /// and starts timing the next step.
    public mutating func lap(_ name: String) {
        guard let recorder, let previous = last else { return }
        let now = ContinuousClock.now
        recorder.steps.append(ProcessingStepTime(name: name, duration: now - previous))
        last = now
    }

    /// Restarts the clock without recording: the time since the last lap belongs to no step.
    public mutating func skip() {
        guard recorder != nil else { return }
        last = .now
    }

    /// Runs `processor` on `image`, the processors of a `|>` chain one by one, and returns the
    /// result with the time each took: each processor is a step named after its type
    /// (``stepName(of:)``) unless it reported steps of its own with a clock.
    static func run(_ processor: any ImageProcessor, on image: AlcedoImage) -> (Result<AlcedoImage, AlcedoError>, [ProcessingStepTime]) {
        let recorder = Recorder()
        let result = $recorder.withValue(recorder) { () -> Result<AlcedoImage, AlcedoError> in
            var image = image
            for part in components(of: processor) {
                let before = recorder.steps.count
                let start = ContinuousClock.now
                do throws(AlcedoError) {
                    image = try part.process(image)
                } catch {
                    recorder.steps.append(ProcessingStepTime(name: stepName(of: part), duration: .now - start))
                    return .failure(error)
                }
                if recorder.steps.count == before {
                    recorder.steps.append(ProcessingStepTime(name: stepName(of: part), duration: .now - start))
                }
            }
            return .success(image)
        }
        return (result, recorder.steps)
    }

    /// The processors of a `|>` chain in the order they run (`processor` itself when it is not one).
    static func components(of processor: any ImageProcessor) -> [any ImageProcessor] {
        guard let composed = processor as? ComposedImageProcessor else { return [processor] }
        return components(of: composed.first) + components(of: composed.second)
    }

    /// A processor's step name: its type's name without the `ImageProcessor` (or `Processor`)
    /// ending, in snake case: `RoundCornerImageProcessor` is `round_corner`.
    public static func stepName(of processor: any ImageProcessor) -> String {
        var name = String(describing: type(of: processor))
        if let generic = name.firstIndex(of: "<") { name = String(name[..<generic]) }
        for suffix in ["ImageProcessor", "Processor"] where name.hasSuffix(suffix) && name.count > suffix.count {
            name.removeLast(suffix.count)
            break
        }
        var snake = ""
        for character in name {
            if character.isUppercase, !snake.isEmpty, snake.last != "_" { snake.append("_") }
            snake.append(contentsOf: character.lowercased())
        }
        return snake
    }
}
