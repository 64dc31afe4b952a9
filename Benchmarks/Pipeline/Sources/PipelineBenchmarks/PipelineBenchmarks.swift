// The full pipeline, timed side by side with Python peers in one run:
//   PipelineBenchmarks INPUT_DIR PEERS_SCRIPT [REPETITIONS]
// INPUT_DIR holds the photos (*.jpg). A loopback server (in this process) serves them; Alcedo
// retrieves all of them through ImageManager (download, DCT-scaled decode, 256x256 downsample,
// JPEG q85 encode, disk store) with an empty cache ("cold"), then again from the disk cache
// with an empty memory cache ("warm"); then `python3 PEERS_SCRIPT BASE_URL NAMES...` does the
// same work with Pillow + requests and pyvips against the same server. Prints the medians and
// the ratios, and one JSON line with everything.
import Alcedo
import Foundation
import NIOPosix

struct Options {
    let inputs: URL
    let peers: String
    let repetitions: Int

    init() {
        let arguments = CommandLine.arguments
        guard arguments.count >= 3 else {
            FileHandle.standardError.write(Data("usage: PipelineBenchmarks INPUT_DIR PEERS_SCRIPT [REPETITIONS]\n".utf8))
            exit(2)
        }
        inputs = URL(fileURLWithPath: arguments[1], isDirectory: true)
        peers = arguments[2]
        repetitions = arguments.count > 3 ? max(1, Int(arguments[3]) ?? 5) : 5
    }
}

/// Retrieves every URL at once through `manager`; returns the seconds taken and checks the results.
func retrieveAll(_ urls: [URL], _ retrieveOptions: AlcedoOptionsInfo, _ manager: ImageManager,
                 expecting cacheType: CacheType) async throws -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    let results = try await withThrowingTaskGroup(of: RetrieveImageResult.self) { group in
        for url in urls {
            group.addTask { try await manager.retrieveImage(with: url, options: retrieveOptions) }
        }
        var results: [RetrieveImageResult] = []
        for try await result in group { results.append(result) }
        return results
    }
    let elapsed = clock.now - start
    if ProcessInfo.processInfo.environment["ALCEDO_BENCH_VERBOSE"] != nil {
        var sum = RetrieveImageMetrics()
        for result in results {
            sum.cacheLookup += result.metrics.cacheLookup
            sum.loading += result.metrics.loading
            sum.decoding += result.metrics.decoding
            sum.processing += result.metrics.processing
            sum.storing += result.metrics.storing
            sum.total += result.metrics.total
        }
        print("  \(cacheType) batch \(elapsed): summed over \(results.count) requests: \(sum)")
    }
    for result in results {
        precondition(result.cacheType == cacheType, "expected \(cacheType), got \(result.cacheType)")
        precondition(result.image.width <= 256 && result.image.height <= 256 && max(result.image.width, result.image.height) == 256,
                     "unexpected size \(result.image.size)")
    }
    let (seconds, attoseconds) = elapsed.components
    return Double(seconds) + Double(attoseconds) / 1e18
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

@main
enum PipelineBenchmarks {
    static func main() async throws {
        let options = Options()
        let names = try FileManager.default.contentsOfDirectory(atPath: options.inputs.path).filter { $0.hasSuffix(".jpg") }.sorted()
        var files: [String: Data] = [:]
        for name in names { files[name] = try Data(contentsOf: options.inputs.appendingPathComponent(name)) }
        let totalBytes = files.values.reduce(0) { $0 + $1.count }

        if ProcessInfo.processInfo.environment["ALCEDO_BENCH_DECODE"] != nil, let data = files[names[0]] {
            let options = DecodingOptions(targetSize: PixelSize(width: 256, height: 256), contentMode: .aspectFit)
            let clock = ContinuousClock()
            for label in ["decode 1/4", "decode + downsample", "decode + downsample + encode"] {
                var samples: [Duration] = []
                for _ in 0..<15 {
                    let start = clock.now
                    var image = try ImageCodecRegistry.shared.decode(data, options: options)
                    if label != "decode 1/4" { image = try DownsamplingImageProcessor(size: PixelSize(width: 256, height: 256)).process(image) }
                    if label.hasSuffix("encode") { _ = try ImageCodecRegistry.shared.encode(image, as: .jpeg, options: EncodingOptions(quality: 85)) }
                    samples.append(clock.now - start)
                    precondition(image.width > 0)
                }
                print("  \(label): median \(samples.sorted()[samples.count / 2])")
            }
        }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await FileServer.start(files: files, group: group)
        let urls = names.map { URL(string: server.baseURL + $0)! }
        let target = PixelSize(width: 256, height: 256)
        let retrieveOptions: AlcedoOptionsInfo = [
            .processor(DownsamplingImageProcessor(size: target)),
            .cacheSerializer(FormatIndicatedCacheSerializer.jpeg(quality: 85)),
            .waitForCache,
        ]

        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-pipeline-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }

        var cold: [Double] = []
        var warm: [Double] = []
        var lastFolder: URL?
        for run in 0..<options.repetitions {
            let folder = scratch.appendingPathComponent("run\(run)")
            let downloader = ImageDownloader(name: "bench")
            let manager = ImageManager(downloader: downloader, cache: ImageCache(name: "bench", cacheDirectoryURL: folder))
            cold.append(try await retrieveAll(urls, retrieveOptions, manager, expecting: .none))
            await downloader.shutdown()
            lastFolder = folder
        }
        for _ in 0..<options.repetitions {
            // A new cache over the same folder: an empty memory cache, every image read from disk.
            let downloader = ImageDownloader(name: "bench-warm")
            let manager = ImageManager(downloader: downloader, cache: ImageCache(name: "bench", cacheDirectoryURL: lastFolder))
            warm.append(try await retrieveAll(urls, retrieveOptions, manager, expecting: .disk))
            await downloader.shutdown()
        }

        // The peers, on the same server, in the same run.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", options.peers, server.baseURL, String(options.repetitions)] + names
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let peerOutput = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        await server.stop()
        try await group.shutdownGracefully()
        guard process.terminationStatus == 0,
              let peers = try JSONSerialization.jsonObject(with: peerOutput) as? [String: Double] else {
            FileHandle.standardError.write(Data("the peers failed: \(String(decoding: peerOutput, as: UTF8.self))\n".utf8))
            exit(1)
        }

        let alcedoCold = median(cold), alcedoWarm = median(warm)
        func ms(_ seconds: Double) -> String { String(format: "%8.1f ms", seconds * 1000) }
        func ratio(_ value: Double) -> String { String(format: "%6.2fx", value) }
        print("\(names.count) JPEGs, \(totalBytes / 1024) KiB in all; fetch + decode + 256x256 downsample + JPEG q85 + store;",
              "median of \(options.repetitions) runs of the whole batch")
        print("  alcedo cold  \(ms(alcedoCold))   (\(names.count) concurrent retrieves, empty cache)")
        print("  alcedo warm  \(ms(alcedoWarm))   (same requests, from the disk cache, empty memory cache)")
        for (key, label) in [("pillow", "Pillow + requests, one at a time"), ("pillow_threads", "Pillow + requests, 4 threads"),
                             ("pyvips", "pyvips thumbnail_buffer + requests, one at a time")] {
            guard let seconds = peers[key] else { continue }
            print("  \(key.padding(toLength: 14, withPad: " ", startingAt: 0))\(ms(seconds))   (\(label))")
        }
        if let pillow = peers["pillow"] {
            let coldRatio = pillow / alcedoCold, warmRatio = pillow / alcedoWarm
            print("ratios (peer time / Alcedo time, higher is faster for Alcedo):")
            print("  cold vs Pillow cold          \(ratio(coldRatio))   goal >= 3x: \(coldRatio >= 3 ? "met" : "MISSED")")
            print("  warm vs Pillow cold          \(ratio(warmRatio))   goal >= 10x: \(warmRatio >= 10 ? "met" : "MISSED")")
            if let threads = peers["pillow_threads"] { print("  cold vs Pillow 4 threads     \(ratio(threads / alcedoCold))") }
            if let vips = peers["pyvips"] { print("  cold vs pyvips               \(ratio(vips / alcedoCold))") }
        }
        var summary: [String: Double] = ["alcedo_cold": alcedoCold, "alcedo_warm": alcedoWarm]
        for (key, value) in peers { summary[key] = value }
        let json = try JSONSerialization.data(withJSONObject: summary, options: [.sortedKeys])
        print(String(decoding: json, as: UTF8.self))
    }
}
