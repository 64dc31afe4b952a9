import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension AlcedoImage {
    /// A copy resized to exactly `size` with ``Resampler`` (box pre-shrink, then Lanczos3 on
    /// premultiplied alpha); the aspect ratio is not kept.
    ///
    /// Every frame is resized; durations, loop count, source format and orientation are
    /// kept. A side of `size` below 1 is raised to 1. When `size` is the current size, the
    /// image itself is returned (its pixel storage is shared, nothing is copied).
    /// Synchronous and CPU-bound: run it off Swift's cooperative pool.
    public func resized(to size: PixelSize) -> AlcedoImage {
        let target = Resampler.clamped(size)
        guard target != self.pixelSize else { return self }
        let plan = ResamplerPlan(from: self.pixelSize, to: target)
        let pixels = Self.resize(frames.map(\.pixels), with: plan)
        let newFrames = zip(frames, pixels).map { Frame(pixels: $1, duration: $0.duration) }
        return replacingFrames(newFrames, width: target.width, height: target.height)
    }

    /// A copy scaled to fit inside `bounds` with its aspect ratio kept (the largest such size,
    /// see ``PixelSize/fitting(in:)``). Never enlarges: an image already inside `bounds` is
    /// returned as it is.
    public func resized(toFit bounds: PixelSize) -> AlcedoImage {
        resized(to: pixelSize.fitting(in: bounds))
    }

    /// A copy scaled to cover `bounds` with its aspect ratio kept (the smallest such size, see
    /// ``PixelSize/filling(_:)``); nothing is cropped, so one side may exceed `bounds`. Never
    /// enlarges: an image smaller than `bounds` is returned as it is.
    public func resized(toFill bounds: PixelSize) -> AlcedoImage {
        resized(to: pixelSize.filling(bounds))
    }

    /// Resizes every frame with `plan`. A frame big enough to use all cores by itself is
    /// split into bands; small frames of an animation are instead resized side by side.
    static func resize(_ frames: [[UInt8]], with plan: ResamplerPlan,
                       concurrency: ResamplerPlan.Concurrency = .automatic) -> [[UInt8]] {
        let framesInParallel = frames.count > 1 && concurrency == .automatic
            && plan.bandCount(for: .automatic) == 1
            && plan.estimatedWork * frames.count >= ResamplerPlan.parallelWorkThreshold
            && ProcessInfo.processInfo.activeProcessorCount > 1
        guard framesInParallel else {
            return frames.map { frame in frame.withUnsafeBufferPointer { plan.resize($0, concurrency: concurrency) } }
        }
        // Each iteration writes only its own slot, and concurrentPerform returns after all of them.
        nonisolated(unsafe) let results = UnsafeMutableBufferPointer<[UInt8]>.allocate(capacity: frames.count)
        results.initialize(repeating: [])
        defer { results.deinitialize().deallocate() }
        DispatchQueue.concurrentPerform(iterations: frames.count) { index in
            results[index] = frames[index].withUnsafeBufferPointer { plan.resize($0, concurrency: .serial) }
        }
        return Array(results)
    }
}
