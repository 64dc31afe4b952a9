import Foundation
import Testing
@testable import Alcedo

@Suite("MemoryStorage")
struct MemoryStorageTests {
    private func makeStorage(
        costLimit: Int = 1_000, countLimit: Int = .max, expiration: StorageExpiration = .seconds(300),
        clock: TestClock = TestClock(), cleanInterval: TimeInterval = 120
    ) -> MemoryStorage.Backend<CostedValue> {
        MemoryStorage.Backend(config: .init(totalCostLimit: costLimit, countLimit: countLimit, expiration: expiration,
                                            cleanInterval: cleanInterval, now: clock.function))
    }

    @Test func storesAndReturnsValues() {
        let storage = makeStorage()
        storage.store(value: CostedValue(id: 1, cacheCost: 10), forKey: "a")
        #expect(storage.value(forKey: "a") == CostedValue(id: 1, cacheCost: 10))
        #expect(storage.value(forKey: "b") == nil)
        #expect(storage.isCached(forKey: "a"))
        #expect(!storage.isCached(forKey: "b"))
        #expect(storage.count == 1)
        #expect(storage.totalCost == 10)
    }

    @Test func replacingAValueUpdatesTheCost() {
        let storage = makeStorage()
        storage.store(value: CostedValue(id: 1, cacheCost: 100), forKey: "a")
        storage.store(value: CostedValue(id: 2, cacheCost: 30), forKey: "a")
        #expect(storage.value(forKey: "a")?.id == 2)
        #expect(storage.count == 1)
        #expect(storage.totalCost == 30)
    }

    @Test func costLimitEvictsLeastRecentlyUsedFirst() {
        let storage = makeStorage(costLimit: 300)
        for (index, key) in ["a", "b", "c"].enumerated() {
            storage.store(value: CostedValue(id: index, cacheCost: 100), forKey: key)
        }
        // Reading "a" makes "b" the least recently used.
        _ = storage.value(forKey: "a")
        storage.store(value: CostedValue(id: 3, cacheCost: 100), forKey: "d")
        #expect(storage.keysByRecency == ["d", "a", "c"])
        #expect(storage.totalCost == 300)
        // A value of 250 needs two more evictions: "c" then "a".
        storage.store(value: CostedValue(id: 4, cacheCost: 250), forKey: "e")
        #expect(storage.keysByRecency == ["e"])
        #expect(storage.totalCost == 250)
    }

    @Test func countLimitEvictsLeastRecentlyUsedFirst() {
        let storage = makeStorage(costLimit: .max, countLimit: 3)
        for (index, key) in ["a", "b", "c"].enumerated() {
            storage.store(value: CostedValue(id: index, cacheCost: 1), forKey: key)
        }
        _ = storage.value(forKey: "a")
        _ = storage.value(forKey: "b")
        storage.store(value: CostedValue(id: 3, cacheCost: 1), forKey: "d")
        #expect(storage.keysByRecency == ["d", "b", "a"])
        #expect(!storage.isCached(forKey: "c"))
    }

    @Test func bothLimitsTogether() {
        let storage = makeStorage(costLimit: 100, countLimit: 4)
        for index in 0..<4 { storage.store(value: CostedValue(id: index, cacheCost: 10), forKey: "k\(index)") }
        storage.store(value: CostedValue(id: 4, cacheCost: 10), forKey: "k4")
        #expect(storage.keysByRecency == ["k4", "k3", "k2", "k1"])
        storage.store(value: CostedValue(id: 5, cacheCost: 75), forKey: "k5")
        #expect(storage.keysByRecency == ["k5", "k4", "k3"])
        #expect(storage.totalCost == 95)
    }

    @Test func valueOverTheLimitByItselfIsNotStored() {
        let storage = makeStorage(costLimit: 100)
        storage.store(value: CostedValue(id: 1, cacheCost: 50), forKey: "small")
        storage.store(value: CostedValue(id: 2, cacheCost: 40), forKey: "big")
        storage.store(value: CostedValue(id: 3, cacheCost: 101), forKey: "big")
        #expect(storage.value(forKey: "big") == nil, "the oversized value is not stored and the stale one is gone")
        #expect(storage.value(forKey: "small")?.id == 1, "nothing else was evicted for it")
        #expect(storage.totalCost == 50)
    }

    @Test func loweringTheLimitsEvictsAtOnce() {
        let storage = makeStorage(costLimit: 1_000)
        for index in 0..<10 { storage.store(value: CostedValue(id: index, cacheCost: 100), forKey: "k\(index)") }
        storage.config.totalCostLimit = 250
        #expect(storage.keysByRecency == ["k9", "k8"])
        storage.config.countLimit = 1
        #expect(storage.keysByRecency == ["k9"])
    }

    @Test func expirationKinds() {
        let clock = TestClock()
        let storage = makeStorage(expiration: .seconds(10), clock: clock)
        storage.store(value: CostedValue(id: 0, cacheCost: 1), forKey: "default")
        storage.store(value: CostedValue(id: 1, cacheCost: 1), forKey: "never", expiration: .never)
        storage.store(value: CostedValue(id: 2, cacheCost: 1), forKey: "days", expiration: .days(1))
        storage.store(value: CostedValue(id: 3, cacheCost: 1), forKey: "date", expiration: .date(clock.now.addingTimeInterval(100)))
        storage.store(value: CostedValue(id: 4, cacheCost: 1), forKey: "expired", expiration: .expired)
        storage.store(value: CostedValue(id: 5, cacheCost: 1), forKey: "past", expiration: .date(clock.now.addingTimeInterval(-1)))
        #expect(!storage.isCached(forKey: "expired"))
        #expect(!storage.isCached(forKey: "past"))
        #expect(storage.count == 4)

        clock.advance(10)
        #expect(!storage.isCached(forKey: "default"))
        #expect(storage.isCached(forKey: "date"))
        clock.advance(90)
        #expect(!storage.isCached(forKey: "date"))
        #expect(storage.isCached(forKey: "days"))
        clock.advance(86_400)
        #expect(!storage.isCached(forKey: "days"))
        #expect(storage.value(forKey: "days") == nil)
        clock.advance(10 * 365 * 86_400)
        #expect(storage.value(forKey: "never")?.id == 1)
    }

    @Test func readingAnExpiredValueRemovesIt() {
        let clock = TestClock()
        let storage = makeStorage(clock: clock)
        storage.store(value: CostedValue(id: 1, cacheCost: 10), forKey: "a", expiration: .seconds(5))
        clock.advance(5)
        #expect(storage.value(forKey: "a") == nil)
        #expect(storage.count == 0)
        #expect(storage.totalCost == 0)
    }

    @Test func extendingExpirationOnAccess() {
        let clock = TestClock()
        let storage = makeStorage(clock: clock)
        for key in ["none", "cacheTime", "custom", "date"] {
            let expiration: StorageExpiration = key == "date" ? .date(clock.now.addingTimeInterval(10)) : .seconds(10)
            storage.store(value: CostedValue(id: 0, cacheCost: 1), forKey: key, expiration: expiration)
        }
        clock.advance(8)
        _ = storage.value(forKey: "none", extendingExpiration: .none)
        _ = storage.value(forKey: "cacheTime", extendingExpiration: .cacheTime)
        _ = storage.value(forKey: "custom", extendingExpiration: .expirationTime(.seconds(100)))
        _ = storage.value(forKey: "date", extendingExpiration: .cacheTime)
        clock.advance(4)  // 12 s after the store, 4 s after the access
        #expect(!storage.isCached(forKey: "none"))
        #expect(storage.isCached(forKey: "cacheTime"))
        #expect(storage.isCached(forKey: "custom"))
        #expect(!storage.isCached(forKey: "date"), "a fixed date is not moved by an access")
        clock.advance(7)  // 11 s after the access
        #expect(!storage.isCached(forKey: "cacheTime"))
        #expect(storage.isCached(forKey: "custom"))
    }

    @Test func isCachedIsNotAnAccess() {
        let storage = makeStorage(costLimit: 200)
        storage.store(value: CostedValue(id: 1, cacheCost: 100), forKey: "a")
        storage.store(value: CostedValue(id: 2, cacheCost: 100), forKey: "b")
        #expect(storage.isCached(forKey: "a"))
        storage.store(value: CostedValue(id: 3, cacheCost: 100), forKey: "c")
        #expect(!storage.isCached(forKey: "a"))
    }

    @Test func removeExpiredAndRemoveAll() {
        let clock = TestClock()
        let storage = makeStorage(clock: clock)
        for index in 0..<3000 {
            storage.store(value: CostedValue(id: index, cacheCost: 0), forKey: "k\(index)",
                          expiration: index.isMultiple(of: 2) ? .seconds(1) : .never)
        }
        clock.advance(1)
        storage.removeExpired()
        #expect(storage.count == 1500)
        #expect(storage.isCached(forKey: "k1"))
        #expect(!storage.isCached(forKey: "k0"))
        storage.remove(forKey: "k1")
        #expect(!storage.isCached(forKey: "k1"))
        storage.removeAll()
        #expect(storage.count == 0)
        #expect(storage.totalCost == 0)
        storage.store(value: CostedValue(id: 9, cacheCost: 5), forKey: "again")
        #expect(storage.value(forKey: "again")?.id == 9)
    }

    @Test func periodicCleanRemovesExpiredValues() async {
        let clock = TestClock()
        let storage = makeStorage(clock: clock, cleanInterval: 0.02)
        storage.store(value: CostedValue(id: 1, cacheCost: 1), forKey: "short", expiration: .seconds(1))
        storage.store(value: CostedValue(id: 2, cacheCost: 1), forKey: "long", expiration: .seconds(100))
        clock.advance(2)
        // Only the periodic clean-up can remove "short": nothing reads it.
        #expect(await eventually { storage.count == 1 })
        #expect(storage.isCached(forKey: "long"))
    }

    @Test func slotsAreReusedAndOrderStaysRight() {
        let storage = makeStorage(costLimit: .max, countLimit: 50)
        for round in 0..<20 {
            for index in 0..<60 { storage.store(value: CostedValue(id: round, cacheCost: 1), forKey: "k\(index)") }
        }
        #expect(storage.count == 50)
        #expect(storage.keysByRecency == (10..<60).reversed().map { "k\($0)" })
    }

    @Test func imagesCostTheirDecodedBytes() {
        let image = AlcedoImage(width: 4, height: 3, frames: [.init(pixels: [UInt8](repeating: 0, count: 48)),
                                                              .init(pixels: [UInt8](repeating: 0, count: 48))])
        let storage = MemoryStorage.Backend<AlcedoImage>(config: .init(totalCostLimit: 200))
        storage.store(value: image, forKey: "animated")
        #expect(storage.totalCost == 96)
        storage.store(value: image, forKey: "second")
        storage.store(value: image, forKey: "third")
        #expect(storage.keysByRecency == ["third", "second"])
    }

    @Test func defaultCostLimitIsAQuarterOfTheMemory() {
        let limit = MemoryStorage.defaultTotalCostLimit
        #expect(limit > 0)
        #expect(UInt64(limit) <= ProcessInfo.processInfo.physicalMemory / 4)
        let config = MemoryStorage.Config()
        #expect(config.totalCostLimit == limit)
        #expect(config.expiration == .seconds(300))
        #expect(config.cleanInterval == 120)
        #expect(config.countLimit == .max)
    }

    @Test func concurrentMixedOperationsKeepTheTableConsistent() async {
        let storage = makeStorage(costLimit: 5_000, countLimit: 300)
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var mismatches = 0
                    var state = UInt64(worker + 1)
                    for step in 0..<1_250 {
                        state = state &* 6364136223846793005 &+ 1442695040888963407
                        let key = "k\(Int(state >> 40) % 500)"
                        switch step % 4 {
                        case 0, 1: storage.store(value: CostedValue(id: Int(state >> 40) % 500, cacheCost: 20), forKey: key)
                        case 2:
                            if let value = storage.value(forKey: key), "k\(value.id)" != key { mismatches += 1 }
                        default: storage.remove(forKey: key)
                        }
                    }
                    return mismatches
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
        let keys = storage.keysByRecency
        #expect(keys.count == storage.count)
        #expect(Set(keys).count == keys.count)
        #expect(storage.count <= 250)
        #expect(storage.totalCost == storage.count * 20)
        for key in keys { #expect(storage.value(forKey: key).map { "k\($0.id)" } == key) }
    }
}
