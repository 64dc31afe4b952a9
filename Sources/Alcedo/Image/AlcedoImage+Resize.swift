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

    /// The `window` of this image resized to `size`: byte for byte `resized(to: size)` cut to
    /// `window`, made without the rest of the resized image. Only the window's pixels are
    /// computed and held, so a crop of an extreme enlargement (a 2000 x 1500 image scaled to
    /// 26667 x 20000 to keep 100 x 20000 of it) costs what the window does.
    ///
    /// Every frame is resized; durations, loop count, source format and orientation are kept.
    /// A side of `size` below 1 is raised to 1; the window's origin is moved inside the resized
    /// image and its sides cut to it (at least 1 pixel each). Synchronous and CPU-bound: run it
    /// off Swift's cooperative pool.
    public func resized(to size: PixelSize, cropping window: (x: Int, y: Int, size: PixelSize)) -> AlcedoImage {
        let target = Resampler.clamped(size)
        let window = Resampler.clamped(window, in: target)
        guard window.size != target else { return resized(to: target) }
        guard target != self.pixelSize else { return cut(window) }
        let plan = ResamplerPlan(from: self.pixelSize, to: target, window: window)
        let pixels = Self.resize(frames.map(\.pixels), with: plan)
        let newFrames = zip(frames, pixels).map { Frame(pixels: $1, duration: $0.duration) }
        return replacingFrames(newFrames, width: window.size.width, height: window.size.height)
    }

    /// Every frame cut to `rect`, which lies inside the image.
    func cut(_ rect: (x: Int, y: Int, size: PixelSize)) -> AlcedoImage {
        let sourceRowBytes = width * 4
        let rowBytes = rect.size.width * 4
        return mappingFrames(to: rect.size) { pixels in
            pixels.withUnsafeBufferPointer { source in
                PixelOps.makeBuffer(count: rowBytes * rect.size.height) { destination in
                    guard let src = source.baseAddress else { return }
                    for row in 0..<rect.size.height {
                        let from = src + (rect.y + row) * sourceRowBytes + rect.x * 4
                        (destination + row * rowBytes).initialize(from: from, count: rowBytes)
                    }
                }
            }
        }
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
