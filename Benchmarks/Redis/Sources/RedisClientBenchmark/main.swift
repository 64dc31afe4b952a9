import Alcedo
import AlcedoRedis
import Foundation

// Usage: RedisClientBenchmark PORT COUNT VALUE_BYTES IN_FLIGHT
// Stores COUNT entries of VALUE_BYTES through RedisSharedStorage (Alcedo's value format: header,
// metadata, SHA-256 checksum), prints their Redis keys to keys.txt in the current folder (for
// the hiredis side), then reads them all back twice: one GET at a time (each awaited before the
// next), and IN_FLIGHT at a time (pipelined on the node's connections). Each read is what the
// shared tier does on a lookup: GET, check the checksum, parse the metadata, copy the bytes.
// Prints one JSON line with the seconds of each pass.
let arguments = CommandLine.arguments
guard arguments.count == 5, let port = Int(arguments[1]), let count = Int(arguments[2]),
      let size = Int(arguments[3]), let inFlight = Int(arguments[4]) else {
    FileHandle.standardError.write(Data("usage: RedisClientBenchmark PORT COUNT VALUE_BYTES IN_FLIGHT\n".utf8))
    exit(2)
}
var configuration = try RedisConfiguration(urls: ["redis://127.0.0.1:\(port)"])
configuration.getTimeout = .seconds(10)
configuration.writeTimeout = .seconds(10)
configuration.connectTimeout = .seconds(10)
let storage = try RedisSharedStorage(configuration: configuration)
try await storage.start()
let payload = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) })
let keys = (0..<count).map { "https://origin.example/photo-\($0).jpg@rs:fit:300:300" }
for key in keys {
    let entry = SharedCacheEntry(data: payload, metadata: .init(key: key, expirationDate: .distantFuture,
                                                                 httpCacheInfo: HTTPCacheInfo(etag: "\"e\""), format: .jpeg))
    guard try await storage.store(entry, forKey: key) else { fatalError("not stored") }
}
try keys.map { storage.redisKey(forKey: $0) }.joined(separator: "\n").appending("\n")
    .write(toFile: "keys.txt", atomically: true, encoding: .utf8)

func check(_ entry: SharedCacheEntry?) {
    guard let entry, entry.data.count == size else { fatalError("entry missing or damaged") }
}

let clock = ContinuousClock()
let sequential = try await clock.measure {
    for key in keys { check(try await storage.entry(forKey: key)) }
}
let concurrent = try await clock.measure {
    try await withThrowingTaskGroup(of: Void.self) { group in
        var next = 0
        while next < min(inFlight, keys.count) {
            let key = keys[next]
            group.addTask { check(try await storage.entry(forKey: key)) }
            next += 1
        }
        while try await group.next() != nil, next < keys.count {
            let key = keys[next]
            group.addTask { check(try await storage.entry(forKey: key)) }
            next += 1
        }
        try await group.waitForAll()
    }
}
storage.shutdown()
func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}
print("{\"client\": \"alcedo\", \"gets\": \(count), \"value_bytes\": \(size), \"in_flight\": \(inFlight), "
      + "\"sequential_s\": \(seconds(sequential)), \"pipelined_s\": \(seconds(concurrent))}")
