// Cache benchmarks, each side by side with a peer in the same run:
//   memory get/set (ns per operation, one thread and both cores) against NSCache;
//   disk store/retrieve of 10,000 entries of 50 KB against plain FileManager writes and reads;
//   clean-up of 10,000 and 100,000 entries against a FileManager scan as Kingfisher does it.
// Usage: CacheBenchmarks WORK_FOLDER [--quick] [--only=memory|disk|cleanup]
import Alcedo
import Dispatch
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

guard CommandLine.arguments.count >= 2 else {
    print("usage: CacheBenchmarks WORK_FOLDER [--quick]")
    exit(2)
}
let work = URL(fileURLWithPath: CommandLine.arguments[1], isDirectory: true)
let quick = CommandLine.arguments.contains("--quick")
let fileManager = FileManager.default

/// Wall-clock seconds of `body`.
func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

func report(_ name: String, alcedo: Double, peer: Double, peerName: String, unit: String, scale: Double) {
    let a = alcedo * scale
    let p = peer * scale
    print(String(format: "%-44@ alcedo %9.1f %@   %@ %9.1f %@   ratio %.2f",
                 name as NSString, a, unit as NSString, peerName as NSString, p, unit as NSString, a / p))
    fflush(nil)
}

// MARK: Memory

/// What NSCache holds: an object around the image (NSCache holds only objects).
final class Box: Sendable {
    let image: AlcedoImage
    init(_ image: AlcedoImage) { self.image = image }
}

/// NSCache is thread-safe (it locks inside) but not marked Sendable on every platform, nor is
/// NSString; the keys are immutable and only read.
struct SharedNSCache: @unchecked Sendable {
    let cache: NSCache<NSString, Box>
    let keys: [NSString]
}

func memoryBenchmarks() {
    let keyCount = 10_000
    let operations = quick ? 200_000 : 2_000_000
    let keys = (0..<keyCount).map { "https://example.com/images/\($0).jpg" }
    let nsKeys = keys.map { $0 as NSString }
    // Small images (the table's cost, not pixel copies, is measured); the same objects on both sides.
    let images = (0..<keyCount).map { AlcedoImage(width: 1 + $0 % 7, height: 1, pixels: [UInt8](repeating: 9, count: 4 * (1 + $0 % 7))) }
    let boxes = images.map(Box.init)

    func runBoth(threads: Int, label: String, evicting: Bool) {
        let storage = MemoryStorage.Backend<AlcedoImage>(config: .init(
            totalCostLimit: .max, countLimit: evicting ? keyCount / 2 : .max, expiration: .never))
        let shared = SharedNSCache(cache: NSCache<NSString, Box>(), keys: nsKeys)
        shared.cache.totalCostLimit = 0
        shared.cache.countLimit = evicting ? keyCount / 2 : 0

        let perThread = operations / threads
        /// Best of three runs of `body` on `threads` threads at once.
        func parallel(_ body: @Sendable (Int) -> Void) -> Double {
            (0..<3).map { _ in seconds { DispatchQueue.concurrentPerform(iterations: threads) { body($0) } } }.min() ?? 0
        }
        let setOurs = parallel { thread in
            var index = thread * 7919
            for _ in 0..<perThread {
                index = (index &+ 1) % keyCount
                storage.store(value: images[index], forKey: keys[index])
            }
        }
        let setPeer = parallel { thread in
            var index = thread * 7919
            for _ in 0..<perThread {
                index = (index &+ 1) % keyCount
                shared.cache.setObject(boxes[index], forKey: shared.keys[index], cost: images[index].cacheCost)
            }
        }
        report("memory set\(evicting ? " (evicting)" : ""), \(label)", alcedo: setOurs, peer: setPeer,
               peerName: "NSCache", unit: "ns/op", scale: 1e9 / Double(perThread * threads))
        guard !evicting else { return }
        let hits = Atomic<Int>(0)
        let getOurs = parallel { thread in
            var index = thread * 7919
            var found = 0
            for _ in 0..<perThread {
                index = (index &+ 1) % keyCount
                if storage.value(forKey: keys[index], extendingExpiration: .none) != nil { found += 1 }
            }
            hits.add(found, ordering: .relaxed)
        }
        let getPeer = parallel { thread in
            var index = thread * 7919
            var found = 0
            for _ in 0..<perThread {
                index = (index &+ 1) % keyCount
                if shared.cache.object(forKey: shared.keys[index]) != nil { found += 1 }
            }
            hits.add(found, ordering: .relaxed)
        }
        report("memory get, \(label)", alcedo: getOurs, peer: getPeer,
               peerName: "NSCache", unit: "ns/op", scale: 1e9 / Double(perThread * threads))
        if hits.load(ordering: .relaxed) != 6 * perThread * threads { print("  (some gets missed)") }
    }

    runBoth(threads: 1, label: "1 thread", evicting: false)
    runBoth(threads: 2, label: "2 threads", evicting: false)
    runBoth(threads: 1, label: "1 thread", evicting: true)
}

// MARK: Disk

/// The peers: plain POSIX calls, as a program that writes files itself would make them.
enum PlainFile {
    /// open(O_CREAT|O_TRUNC), write, close: not atomic, not synced.
    static func write(_ data: Data, to path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        precondition(fd >= 0)
        data.withUnsafeBytes { precondition(Glibc.write(fd, $0.baseAddress, $0.count) == $0.count) }
        close(fd)
    }

    /// The same into a temporary file, renamed over `path`: atomic, not synced.
    static func writeAtomically(_ data: Data, to path: String) {
        write(data, to: path + ".tmp")
        precondition(rename(path + ".tmp", path) == 0)
    }

    /// open, fstat, read, close.
    static func read(_ path: String) -> Data {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        precondition(fd >= 0)
        defer { close(fd) }
        var info = stat()
        fstat(fd, &info)
        var data = Data(count: Int(info.st_size))
        let count = data.count
        data.withUnsafeMutableBytes { precondition(Glibc.read(fd, $0.baseAddress, count) == count) }
        return data
    }
}

func diskBenchmarks() throws {
    let count = quick ? 2_000 : 10_000
    let foundationCount = count / 10
    let size = 50_000
    var generator = SystemRandomNumberGenerator()
    let payloads = (0..<16).map { _ in Data((0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }) }
    let keys = (0..<count).map { "https://example.com/images/\($0).jpg" }
    func folder(_ name: String) throws -> URL {
        let url = work.appendingPathComponent(name, isDirectory: true)
        try fileManager.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
    let plainPaths = try folder("plain").path
    let atomicPaths = try folder("atomic").path
    let foundationFolder = try folder("foundation")
    let storage = DiskStorage.EntryStore(config: .init(folderURL: work.appendingPathComponent("alcedo", isDirectory: true)))

    // Each side writes its own new files, in a hundred interleaved batches so that the page cache,
    // writeback and the other users of the machine weigh on every side alike. Foundation's
    // Data.write fsyncs every file on Linux, so it writes a tenth as many (figures are per entry).
    var writePlain = 0.0
    var writeOurs = 0.0
    var writeAtomic = 0.0
    var writeFoundation = 0.0
    let batch = count / 100
    for start in stride(from: 0, to: count, by: batch) {
        let range = start..<min(start + batch, count)
        writePlain += seconds { for index in range { PlainFile.write(payloads[index % 16], to: "\(plainPaths)/\(index)") } }
        writeOurs += try seconds {
            for index in range { try storage.store(value: payloads[index % 16], forKey: keys[index]) }
        }
        writeAtomic += seconds {
            for index in range { PlainFile.writeAtomically(payloads[index % 16], to: "\(atomicPaths)/\(index)") }
        }
        writeFoundation += try seconds {
            for index in range.prefix(foundationCount / 100) {
                try payloads[index % 16].write(to: foundationFolder.appendingPathComponent("\(index)"))
            }
        }
    }
    try? fileManager.removeItem(atPath: atomicPaths)
    try? fileManager.removeItem(at: foundationFolder)
    let perEntry = 1e6 / Double(count)
    report("disk store \(count) x 50 KB", alcedo: writeOurs, peer: writePlain,
           peerName: "open/write/close", unit: "us/entry", scale: perEntry)
    report("disk store, atomic peer", alcedo: writeOurs, peer: writeAtomic,
           peerName: "write+rename", unit: "us/entry", scale: perEntry)
    report("disk store, Foundation peer (fsyncs)", alcedo: writeOurs * perEntry, peer: writeFoundation * 1e6 / Double(foundationCount),
           peerName: "Data.write", unit: "us/entry", scale: 1)

    // Reads from a warm page cache, interleaved in batches as above, best of three rounds.
    var readOurs = Double.infinity
    var readPlain = Double.infinity
    var readFoundation = Double.infinity
    var bytes = 0
    for _ in 0..<3 {
        var ours = 0.0
        var plain = 0.0
        var foundation = 0.0
        for start in stride(from: 0, to: count, by: batch) {
            let range = start..<min(start + batch, count)
            plain += seconds { for index in range { bytes &+= PlainFile.read("\(plainPaths)/\(index)").count } }
            ours += try seconds { for index in range { bytes &+= try storage.value(forKey: keys[index])?.count ?? 0 } }
            foundation += try seconds {
                for index in range { bytes &+= try Data(contentsOf: URL(fileURLWithPath: "\(plainPaths)/\(index)")).count }
            }
        }
        readOurs = min(readOurs, ours)
        readPlain = min(readPlain, plain)
        readFoundation = min(readFoundation, foundation)
    }
    report("disk retrieve \(count) x 50 KB", alcedo: readOurs, peer: readPlain,
           peerName: "open/read/close", unit: "us/entry", scale: perEntry)
    report("disk retrieve, Foundation peer", alcedo: readOurs, peer: readFoundation,
           peerName: "Data(contentsOf:)", unit: "us/entry", scale: perEntry)

    // The same reads when every one also writes the access to the file, as the first read of an
    // entry in a minute does (accessTimeGranularity 0 makes every read do it).
    let writingAccess = DiskStorage.EntryStore(config: .init(folderURL: storage.directoryURL, accessTimeGranularity: 0))
    var readWriting = Double.infinity
    var readPlainAgain = Double.infinity
    for _ in 0..<3 {
        var ours = 0.0
        var plain = 0.0
        for start in stride(from: 0, to: count, by: batch) {
            let range = start..<min(start + batch, count)
            plain += seconds { for index in range { bytes &+= PlainFile.read("\(plainPaths)/\(index)").count } }
            ours += try seconds { for index in range { bytes &+= try writingAccess.value(forKey: keys[index])?.count ?? 0 } }
        }
        readWriting = min(readWriting, ours)
        readPlainAgain = min(readPlainAgain, plain)
    }
    report("disk retrieve, writing the access each time", alcedo: readWriting, peer: readPlainAgain,
           peerName: "open/read/close", unit: "us/entry", scale: perEntry)
    if bytes != 15 * count * size { print("  (some reads missed: \(bytes) bytes)") }
    try? fileManager.removeItem(atPath: plainPaths)
    try storage.removeAll()
}

// MARK: Clean-up

/// A clock the clean-up benchmark moves by hand.
final class ManualClock: Sendable {
    private let current = Mutex(Date(timeIntervalSince1970: 1_700_000_000))
    var now: Date { current.withLock { $0 } }
    func set(_ date: Date) { current.withLock { $0 = date } }
}

/// Wall-clock and CPU seconds of `body` (the machine may be shared: CPU time is this process's own).
func timed(_ body: () throws -> Void) rethrows -> (wall: Double, cpu: Double) {
    func cpuNow() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
    let cpuStart = cpuNow()
    let wall = try seconds(body)
    return (wall, cpuNow() - cpuStart)
}

struct CleanUpFigures {
    var freshScan = (wall: 0.0, cpu: 0.0)
    var knownScan = (wall: 0.0, cpu: 0.0)
    var expired = (wall: 0.0, cpu: 0.0)
    var expiredRemoved = 0
    var trim = (wall: 0.0, cpu: 0.0)
    var trimRemoved = 0
    var fileSize = 0
}

/// Fills a folder with `count` entries of 200 bytes, one stored per simulated second, a tenth
/// of them expiring after an hour. Then: a scan by a new backend (as after a restart) and by
/// the backend that wrote them; a clean-up of the expired tenth by the writing backend; and a
/// clean-up by a new backend with a size limit of 80 % of what is left, trimmed to half of that.
func cleanUpOurs(count: Int) throws -> CleanUpFigures {
    let folder = work.appendingPathComponent("alcedo-clean-\(count)", isDirectory: true)
    let clock = ManualClock()
    let start = clock.now
    let writer = DiskStorage.EntryStore(config: .init(folderURL: folder, expiration: .never, now: { clock.now }))
    let payload = Data(count: 200)
    for index in 0..<count {
        clock.set(start.addingTimeInterval(Double(index)))
        try writer.store(value: payload, forKey: "https://example.com/\(index)",
                         expiration: index % 10 == 0 ? .seconds(3_600) : .never)
    }
    var figures = CleanUpFigures()
    figures.fileSize = try writer.totalSize() / count
    clock.set(start.addingTimeInterval(Double(count) + 7_200))
    var statistics: DiskStorage.Statistics?
    figures.freshScan = try timed {
        statistics = try DiskStorage.EntryStore(config: .init(folderURL: folder, now: { clock.now })).statistics()
    }
    precondition(statistics?.entryCount == count)
    figures.knownScan = try timed { statistics = try writer.statistics() }
    figures.expired = try timed { figures.expiredRemoved = try writer.cleanUp().all.count }
    let left = try writer.totalSize()
    let config = DiskStorage.EntryStore.Config(folderURL: folder, sizeLimit: left * 8 / 10, expiration: .never, now: { clock.now })
    figures.trim = try timed { figures.trimRemoved = try DiskStorage.EntryStore(config: config).cleanUp().all.count }
    try? fileManager.removeItem(at: folder)
    return figures
}

/// The same folder shape as plain files, cleaned the way Kingfisher's disk storage does it:
/// list with resource values (modification date as expiration, size), remove the expired;
/// then list again, sort by date and remove the oldest down to the same target.
func cleanUpPeer(count: Int, fileSize: Int) throws -> (expired: (wall: Double, cpu: Double), expiredRemoved: Int,
                                                      trim: (wall: Double, cpu: Double), trimRemoved: Int) {
    let folder = work.appendingPathComponent("plain-clean-\(count)", isDirectory: true)
    try fileManager.createDirectory(at: folder, withIntermediateDirectories: true)
    let payload = Data(count: fileSize)  // the size of one of Alcedo's files, header included
    let base = Date(timeIntervalSince1970: 1_700_000_000)
    for index in 0..<count {
        let path = "\(folder.path)/\(index)"
        PlainFile.write(payload, to: path)
        let expiration = index % 10 == 0 ? base.addingTimeInterval(Double(index) + 3_600) : Date.distantFuture
        try fileManager.setAttributes([.modificationDate: expiration], ofItemAtPath: path)
    }
    let now = base.addingTimeInterval(Double(count) + 7_200)
    let keys: [URLResourceKey] = [.contentModificationDateKey, .fileSizeKey, .isDirectoryKey]
    func list() throws -> [(url: URL, date: Date, size: Int)] {
        try fileManager.contentsOfDirectory(at: folder, includingPropertiesForKeys: keys).compactMap { url in
            let values = try url.resourceValues(forKeys: Set(keys))
            guard values.isDirectory != true, let date = values.contentModificationDate else { return nil }
            return (url, date, values.fileSize ?? 0)
        }
    }
    var expiredRemoved = 0
    let expired = try timed {
        for file in try list() where file.date <= now {
            try fileManager.removeItem(at: file.url)
            expiredRemoved += 1
        }
    }
    var trimRemoved = 0
    let trim = try timed {
        let files = try list().sorted { $0.date < $1.date }
        var total = files.reduce(0) { $0 + $1.size }
        let limit = total * 8 / 10
        guard total > limit else { return }
        for file in files where total > limit / 2 {
            try fileManager.removeItem(at: file.url)
            total -= file.size
            trimRemoved += 1
        }
    }
    try? fileManager.removeItem(at: folder)
    return (expired, expiredRemoved, trim, trimRemoved)
}

func cleanUpBenchmarks() throws {
    func line(_ name: String, _ ours: (wall: Double, cpu: Double), _ peer: (wall: Double, cpu: Double), _ peerName: String) {
        report(name, alcedo: ours.wall, peer: peer.wall, peerName: peerName, unit: "ms", scale: 1_000)
        print(String(format: "  %-42@ cpu: alcedo %9.1f ms   peer %9.1f ms   ratio %.2f",
                     "" as NSString, ours.cpu * 1_000, peer.cpu * 1_000, ours.cpu / peer.cpu))
    }
    for count in quick ? [10_000] : [10_000, 100_000] {
        let ours = try cleanUpOurs(count: count)
        let peer = try cleanUpPeer(count: count, fileSize: ours.fileSize)
        line("clean-up of \(count): expired (\(ours.expiredRemoved))", ours.expired, peer.expired,
             "FileManager (\(peer.expiredRemoved))")
        line("clean-up of \(count - ours.expiredRemoved) after restart: limit (\(ours.trimRemoved))", ours.trim, peer.trim,
             "FileManager (\(peer.trimRemoved))")
        print(String(format: "  scan of %d entries: after restart %.1f ms (cpu %.1f), known to the backend %.1f ms (cpu %.1f)",
                     count, ours.freshScan.wall * 1_000, ours.freshScan.cpu * 1_000,
                     ours.knownScan.wall * 1_000, ours.knownScan.cpu * 1_000))
    }
}

try fileManager.createDirectory(at: work, withIntermediateDirectories: true)
print("Cache benchmarks (\(ProcessInfo.processInfo.activeProcessorCount) cores)\(quick ? ", quick" : ""): ratio = alcedo / peer, lower is better")
let only = CommandLine.arguments.first { $0.hasPrefix("--only=") }?.dropFirst("--only=".count)
if only == nil || only == "memory" { memoryBenchmarks() }
if only == nil || only == "disk" { try diskBenchmarks() }
if only == nil || only == "cleanup" { try cleanUpBenchmarks() }
