@_spi(Testing) import Alcedo
import ArgumentParser
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

extension CacheCommand {
    /// Writes entries through an ``ImageCache`` the way a real process would, for the crash,
    /// multi-process, read-only and disk-full tests. Hidden from help.
    ///
    /// Entry bytes are `key|writer|` repeated to `--size` bytes, so a reader can tell a whole
    /// entry from a torn or mixed one. One JSON line is printed per operation.
    struct DebugWrite: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "debug-write", abstract: "Write test entries (for Alcedo's own tests).",
            shouldDisplay: false)

        @Option(name: .customLong("cache-dir")) var cacheDirectory: String
        @Option(name: .customLong("key")) var keys: [String] = []
        @Option(name: .customLong("key-prefix")) var keyPrefix: String?
        @Option var count = 0
        @Option var size = 1_000
        @Option var writer = 0
        @Option(name: .customLong("read")) var reads: [String] = []
        @Flag(name: .customLong("pause-mid-write")) var pauseMidWrite = false
        @Flag(name: .customLong("drop-privileges")) var dropPrivileges = false
        @Option(name: .customLong("file-size-limit")) var fileSizeLimit: Int?

        func run() throws {
            if dropPrivileges, geteuid() == 0 {
                guard setgid(65_534) == 0, setuid(65_534) == 0 else { throw ExitCode(3) }
            }
            if let fileSizeLimit {
                // Writes past the limit fail with EFBIG instead of killing the process.
                signal(SIGXFSZ, SIG_IGN)
                var limit = rlimit(rlim_cur: rlim_t(fileSizeLimit), rlim_max: rlim_t(fileSizeLimit))
                guard setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0 else { throw ExitCode(3) }
            }
            let cache = ImageCache(
                memoryStorage: MemoryStorage.Backend(config: .init(totalCostLimit: 64 << 20)),
                diskStorage: DiskStorage.EntryStore(config: .init(folderURL: URL(fileURLWithPath: cacheDirectory, isDirectory: true))))
            if pauseMidWrite {
                cache.diskStorage.setMidWriteHook { path in
                    print("PAUSED \(path)")
                    fflush(nil)
                    while true { sleep(60) }
                }
            }
            for key in reads {
                let data = try? cache.diskStorage.value(forKey: key)
                emit(["read": key, "found": data != nil ? "true" : "false", "bytes": "\(data?.count ?? 0)"])
            }
            let allKeys = keys + (keyPrefix.map { prefix in (0..<count).map { "\(prefix)\($0)" } } ?? [])
            let image = AlcedoImage(width: 1, height: 1, pixels: [1, 2, 3, 255])
            let done = DispatchSemaphore(value: 0)
            Task {
                for key in allKeys {
                    var result = ["key": key]
                    do throws(AlcedoError) {
                        try await cache.store(image, original: Self.entryBytes(key: key, writer: writer, size: size), forKey: key)
                        result["stored"] = "true"
                    } catch {
                        result["stored"] = "false"
                        result["error"] = Self.kind(of: error)
                    }
                    result["inMemory"] = cache.retrieveImageInMemoryCache(forKey: key) != nil ? "true" : "false"
                    emit(result)
                }
                done.signal()
            }
            done.wait()
        }

        private func emit(_ fields: [String: String]) {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            if let data = try? encoder.encode(fields) { print(String(decoding: data, as: UTF8.self)) }
            fflush(nil)
        }

        static func entryBytes(key: String, writer: Int, size: Int) -> Data {
            let unit = Array("\(key)|\(writer)|".utf8)
            var bytes = [UInt8]()
            bytes.reserveCapacity(size)
            while bytes.count < size { bytes.append(unit[bytes.count % unit.count]) }
            return Data(bytes)
        }

        static func kind(of error: AlcedoError) -> String {
            guard case .cacheError(let reason) = error else { return "other" }
            switch reason.storageFailure {
            case .diskFull?: return "diskFull"
            case .readOnly?: return "readOnly"
            case .cannotCreateDirectory?: return "cannotCreateDirectory"
            case .writeFailed?: return "writeFailed"
            default: return "other"
            }
        }
    }
}
