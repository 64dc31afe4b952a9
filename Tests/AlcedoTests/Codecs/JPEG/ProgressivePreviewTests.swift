import Foundation
import Synchronization
import Testing
@testable import Alcedo

/// A progressive JPEG made in-process with Alcedo's encoder, and where its scans begin.
struct ProgressiveSample: Sendable {
    let data: Data
    /// For each scan after the first, the offset just past its SOS header: the bytes up to
    /// there complete the scans before it.
    let scanStarts: [Int]
    /// For each scan after the first, the offset of its SOS marker.
    let scanMarkers: [Int]

    /// Scans in the file.
    var scanCount: Int { scanStarts.count + 1 }

    /// A detailed `width` x `height` picture (a gradient with noise), progressive, quality 85.
    /// `app1` (a whole APP1 segment, marker included) is placed right after SOI when given.
    static func make(width: Int = 96, height: Int = 64, progressive: Bool = true, app1: [UInt8]? = nil) -> ProgressiveSample {
        var random = SeededRandom(seed: 42)
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let index = (y * width + x) * 4
                pixels[index] = UInt8(truncatingIfNeeded: x * 255 / width + Int(random.next() % 40))
                pixels[index + 1] = UInt8(truncatingIfNeeded: y * 255 / height + Int(random.next() % 40))
                pixels[index + 2] = UInt8(truncatingIfNeeded: (x ^ y) * 4)
            }
        }
        let image = AlcedoImage(width: width, height: height, pixels: pixels, sourceFormat: .jpeg)
        let data = try! JPEGEncoder(progressive: progressive).encode(image, options: EncodingOptions(quality: 85))
        var bytes = [UInt8](data)
        if let app1 { bytes.insert(contentsOf: app1, at: 2) }
        let scans = JPEGTestSupport.segments(bytes).filter { $0.marker == 0xDA }
        let later = scans.dropFirst()
        let starts = later.map { $0.range.lowerBound + 2 + (Int(bytes[$0.range.lowerBound + 2]) << 8 | Int(bytes[$0.range.lowerBound + 3])) }
        return ProgressiveSample(data: Data(bytes), scanStarts: starts, scanMarkers: later.map(\.range.lowerBound))
    }

    /// What ``JPEGDecoder`` makes of the scans before scan `scan + 1` (the file cut before its
    /// SOS marker), partial data allowed.
    func referenceDecode(throughScan scan: Int, options: DecodingOptions = .default) throws -> AlcedoImage {
        var options = options
        options.allowTruncated = true
        return try JPEGDecoder().decode(data.prefix(scanMarkers[scan - 1]), options: options)
    }
}

/// Feeds `previewer` the bytes `range` of `data` as one chunk of a download.
func feed(_ previewer: ProgressivePreviewer, _ data: Data, _ range: Range<Int>) {
    previewer.receive(DownloadProgress(receivedBytes: range.upperBound, expectedBytes: data.count,
                                       chunk: data.subdata(in: range)))
}

/// Feeds `previewer` the sample up to the start of its last scan, one scan at a time, waiting
/// after each; `before(i)` runs before scan `i` (from 0) is fed, `after(n)` once `n` scans are in.
func feedScanByScan(_ previewer: ProgressivePreviewer, _ sample: ProgressiveSample, before: (Int) -> Void = { _ in },
                    after: (Int) -> Void = { _ in }) async {
    var start = 0
    for (index, end) in sample.scanStarts.enumerated() {
        before(index)
        feed(previewer, sample.data, start..<end)
        start = end
        await previewer.waitUntilIdle()
        after(index + 1)
    }
}

@Suite("Progressive JPEG previews: the incremental decoder")
struct ProgressivePreviewTests {
    private static let sample = ProgressiveSample.make()
    private static let sharp = ImageProgressive(isBlur: false, isFastestScan: false, scanInterval: 0)

    private func previewer(_ settings: ImageProgressive = sharp, options: DecodingOptions = .default,
                           processor: (any ImageProcessor)? = nil,
                           now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now },
                           into previews: Collected<AlcedoImage>) -> ProgressivePreviewer {
        ProgressivePreviewer(settings: settings, decodingOptions: options, processor: processor, modifier: nil,
                             priority: .normal, now: now, deliver: { previews.append($0) })
    }

    @Test("the encoder writes a multi-scan progressive file")
    func sampleHasScans() {
        #expect(Self.sample.scanCount >= 6)
    }

    @Test("fed scan by scan, every scan but the last gives a preview equal to a decode of the bytes so far")
    func everyScanInOrder() async throws {
        let sample = Self.sample
        let previews = Collected<AlcedoImage>()
        let previewer = previewer(into: previews)
        await feedScanByScan(previewer, sample, after: { count in #expect(previews.values.count == count) })
        feed(previewer, sample.data, sample.scanStarts.last!..<sample.data.count)
        await previewer.waitUntilIdle()
        let shown = previews.values
        #expect(shown.count == sample.scanCount - 1)
        for (index, preview) in shown.enumerated() {
            let reference = try sample.referenceDecode(throughScan: index + 1)
            #expect(preview.pixelSize == PixelSize(width: 96, height: 64))
            #expect(preview == reference, "scan \(index + 1)")
        }
        // Later scans refine the picture: the last preview is closer to the final decode than the first.
        let final = try JPEGDecoder().decode(sample.data)
        #expect(try #require(shown.last).meanAbsoluteDifference(to: final) < shown[0].meanAbsoluteDifference(to: final))
    }

    @Test("the bytes may arrive in any pieces, one byte at a time included")
    func oddChunks() async throws {
        let sample = Self.sample
        let previews = Collected<AlcedoImage>()
        let previewer = previewer(into: previews)
        var offset = 0
        var size = 1
        while offset < sample.data.count {
            let end = min(sample.data.count, offset + size)
            feed(previewer, sample.data, offset..<end)
            offset = end
            size = size % 97 + 1
        }
        await previewer.waitUntilIdle()
        // Scans may be skipped while a preview decodes, never shown out of order or wrong.
        #expect(previews.values.count >= 1)
        #expect(previews.values.allSatisfy { $0.pixelSize == PixelSize(width: 96, height: 64) })
        #expect(previewer.mostConcurrentRenders == 1)
    }

    @Test("the fastest scan shows only the newest of the scans that arrived together")
    func fastestScan() async throws {
        let sample = Self.sample
        let fastest = ImageProgressive(isBlur: false, isFastestScan: true, scanInterval: 0)
        let previews = Collected<AlcedoImage>()
        let quick = previewer(fastest, into: previews)
        feed(quick, sample.data, 0..<sample.scanStarts[2])  // scans 1, 2 and 3 at once
        await quick.waitUntilIdle()
        #expect(previews.values.count == 1)
        #expect(previews.values.first == (try? sample.referenceDecode(throughScan: 3)))
        #expect(quick.renderedCount == 1)

        let each = Collected<AlcedoImage>()
        let slow = previewer(Self.sharp, into: each)
        feed(slow, sample.data, 0..<sample.scanStarts[2])
        await slow.waitUntilIdle()
        #expect(each.values.count == 3)
        #expect(each.values.last == (try? sample.referenceDecode(throughScan: 3)))
    }

    @Test("scanInterval: a scan completing sooner after the last preview is skipped")
    func scanInterval() async throws {
        let sample = Self.sample
        let clock = Mutex(ContinuousClock.now)
        let previews = Collected<AlcedoImage>()
        let previewer = previewer(ImageProgressive(isBlur: false, isFastestScan: false, scanInterval: 10),
                                  now: { clock.withLock { $0 } }, into: previews)
        // Scan i completes at 4 s x i: previews at 0 s (scan 1), 12 s (scan 4), 24 s (scan 7)...
        await feedScanByScan(previewer, sample, before: { index in clock.withLock { $0 = $0 + .seconds(index == 0 ? 0 : 4) } })
        let expected = (sample.scanCount - 2) / 3 + 1
        #expect(previews.values.count == expected)
        #expect(previews.values.first == (try? sample.referenceDecode(throughScan: 1)))
        #expect(previews.values.dropFirst().first == (try? sample.referenceDecode(throughScan: 4)))
    }

    @Test("an infinite or NaN scanInterval is taken as never again and as none", arguments: [Double.infinity, .nan, -1])
    func oddIntervals(_ interval: Double) async throws {
        let sample = Self.sample
        let previews = Collected<AlcedoImage>()
        let previewer = previewer(ImageProgressive(isBlur: false, isFastestScan: false, scanInterval: interval), into: previews)
        await feedScanByScan(previewer, sample)
        #expect(previews.values.count == (interval.isInfinite ? 1 : sample.scanCount - 1))
    }

    @Test("blur: the previews of the first scans are blurred, later ones are sharp")
    func blur() async throws {
        let sample = Self.sample
        let previews = Collected<AlcedoImage>()
        let previewer = previewer(ImageProgressive(isBlur: true, isFastestScan: false, scanInterval: 0), into: previews)
        await feedScanByScan(previewer, sample)
        let shown = previews.values
        #expect(shown.count == sample.scanCount - 1)
        let first = try sample.referenceDecode(throughScan: 1)
        #expect(shown[0] != first)
        #expect(shown[0] == (try? BlurImageProcessor(blurRadius: 6).process(first)))
        #expect(shown[4] == (try? sample.referenceDecode(throughScan: 5)))
    }

    @Test("processors run on previews; decoder-side scaling gives the final size")
    func processorAndScaling() async throws {
        let sample = Self.sample
        let processor = DownsamplingImageProcessor(size: PixelSize(width: 24, height: 16))
        var options = DecodingOptions.default
        let target = try #require(processor.decodingTarget)
        options.targetSize = target.size
        options.contentMode = target.mode
        let previews = Collected<AlcedoImage>()
        let previewer = previewer(options: options, processor: processor, into: previews)
        feed(previewer, sample.data, 0..<sample.scanStarts[0])
        await previewer.waitUntilIdle()
        let final = try processor.process(JPEGDecoder().decode(sample.data, options: options))
        #expect(previews.values.count == 1)
        #expect(previews.values.first?.pixelSize == final.pixelSize)
        #expect(previews.values.first == (try? processor.process(sample.referenceDecode(throughScan: 1, options: options))))
    }

    @Test("the EXIF orientation is applied to previews as to the final image")
    func orientation() async throws {
        let rotated = [UInt8](try JPEGOrientationTests.file(6))
        let app1 = try #require(JPEGTestSupport.segments(rotated).first { $0.marker == 0xE1 })
        let sample = ProgressiveSample.make(app1: Array(rotated[app1.range]))
        let previews = Collected<AlcedoImage>()
        let previewer = previewer(into: previews)
        await feedScanByScan(previewer, sample)
        let final = try JPEGDecoder().decode(sample.data)
        #expect(final.pixelSize == PixelSize(width: 64, height: 96))
        #expect(previews.values.count == sample.scanCount - 1)
        #expect(previews.values.allSatisfy { $0.pixelSize == final.pixelSize && $0.orientation == .right })
        #expect(previews.values.first == (try? sample.referenceDecode(throughScan: 1)))
        #expect(previews.values.last == (try? sample.referenceDecode(throughScan: sample.scanCount - 1)))
    }

    @Test("a baseline JPEG and other formats give no preview and stop the decoder")
    func notProgressive() async throws {
        for data in [ProgressiveSample.make(progressive: false).data, TestImages.webp(width: 40, height: 30)] {
            let previews = Collected<AlcedoImage>()
            let previewer = previewer(into: previews)
            feed(previewer, data, 0..<data.count / 2)
            await previewer.waitUntilIdle()
            feed(previewer, data, data.count / 2..<data.count)
            await previewer.waitUntilIdle()
            #expect(previews.values.isEmpty)
            #expect(previewer.renderedCount == 0)
        }
    }

    @Test("after close nothing is decoded or delivered")
    func closeStopsDecoding() async throws {
        let sample = Self.sample
        let previews = Collected<AlcedoImage>()
        let previewer = previewer(into: previews)
        feed(previewer, sample.data, 0..<sample.scanStarts[0])
        await previewer.waitUntilIdle()
        #expect(previewer.renderedCount == 1)
        previewer.close()
        feed(previewer, sample.data, sample.scanStarts[0]..<sample.data.count)
        await previewer.waitUntilIdle()
        #expect(previewer.renderedCount == 1)
        #expect(previews.values.count == 1)
    }

    @Test("bytes that do not continue the body (a caller joining late, a retry) stop the previews")
    func discontinuity() async throws {
        let sample = Self.sample
        let previews = Collected<AlcedoImage>()
        let previewer = previewer(into: previews)
        feed(previewer, sample.data, 100..<sample.scanStarts[1])
        feed(previewer, sample.data, sample.scanStarts[1]..<sample.data.count)
        await previewer.waitUntilIdle()
        #expect(previews.values.isEmpty)
    }

    @Test("the pixel limit and the scan limits apply to previews")
    func limits() async throws {
        let sample = Self.sample
        var small = DecodingOptions.default
        small.limits = DecodingLimits(maxPixelCount: 96 * 64 - 1)
        let previews = Collected<AlcedoImage>()
        let limited = previewer(options: small, into: previews)
        feed(limited, sample.data, 0..<sample.data.count)
        await limited.waitUntilIdle()
        #expect(previews.values.isEmpty)
        #expect(limited.renderedCount == 0)

        // A thousand repeated scans: refused after 64 passes over the blocks, without a crash.
        let bytes = [UInt8](sample.data)
        let segments = JPEGTestSupport.segments(bytes)
        let scans = segments.filter { $0.marker == 0xDA }
        let smallest = try #require(scans.dropFirst().min { $0.range.count < $1.range.count })
        let eoi = try #require(segments.last { $0.marker == 0xD9 })
        var hostile = Array(bytes[..<eoi.range.lowerBound])
        for _ in 0..<1_010 { hostile += bytes[smallest.range] }
        hostile += [0xFF, 0xD9]
        let data = Data(hostile)
        let scanner = try ProgressiveJPEGScanner(options: .default)
        try scanner.append(data)
        var error: AlcedoError?
        var events = 0
        do {
            while try scanner.advance() != .needsData { events += 1 }
        } catch let thrown {
            error = thrown
        }
        #expect(events < 1_000)
        guard case .decodingFailed(.corrupt(.jpeg, let message))? = error?.processorCause else {
            Issue.record("expected corrupt, got \(String(describing: error))")
            return
        }
        #expect(message.contains("more than 64 times"), "\(message)")
    }

    @Test("corrupt and truncated bytes mid-stream never crash")
    func hostileBytes() async throws {
        let sample = Self.sample
        var random = SeededRandom(seed: 7)
        for round in 0..<40 {
            var bytes = [UInt8](sample.data)
            let from = sample.scanStarts[0] + Int(random.next() % UInt64(bytes.count - sample.scanStarts[0]))
            switch round % 3 {
            case 0: for i in from..<min(bytes.count, from + 64) { bytes[i] = UInt8(truncatingIfNeeded: random.next()) }
            case 1: bytes = Array(bytes[..<from])
            default: bytes.insert(contentsOf: [0xFF, UInt8(truncatingIfNeeded: random.next())], at: from)
            }
            let data = Data(bytes)
            let previews = Collected<AlcedoImage>()
            let previewer = previewer(into: previews)
            var offset = 0
            while offset < data.count {
                let end = min(data.count, offset + 1 + Int(random.next() % 300))
                feed(previewer, data, offset..<end)
                offset = end
            }
            await previewer.waitUntilIdle()
            #expect(previews.values.allSatisfy { $0.pixelSize == PixelSize(width: 96, height: 64) })
        }
    }
}

extension AlcedoImage {
    /// The mean absolute difference of the RGB samples of two images of the same size.
    func meanAbsoluteDifference(to other: AlcedoImage) -> Double {
        let a = frames[0].pixels, b = other.frames[0].pixels
        guard a.count == b.count, !a.isEmpty else { return .infinity }
        var total = 0
        for index in a.indices where index % 4 != 3 { total += abs(Int(a[index]) - Int(b[index])) }
        return Double(total) / Double(a.count / 4 * 3)
    }
}
