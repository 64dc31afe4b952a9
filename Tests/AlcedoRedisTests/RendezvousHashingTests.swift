import Testing
@testable import AlcedoRedis
import Alcedo

@Suite("Rendezvous hashing")
struct RendezvousHashingTests {
    let keys = (0..<10_000).map { "alcedo:key-\($0)" }

    @Test func threeNodesEachHoldAThirdOfTenThousandKeys() {
        let hashing = RendezvousHashing(nodes: ["redis://10.0.0.1:6379", "redis://10.0.0.2:6379", "redis://10.0.0.3:6379"])
        var counts = [0, 0, 0]
        for key in keys { counts[hashing.node(for: key)!] += 1 }
        for count in counts {
            let share = Double(count) / Double(keys.count)
            #expect(abs(share - 1.0 / 3.0) <= 0.05, "share \(share) of \(counts)")
        }
    }

    @Test func removingANodeMovesOnlyItsKeys() {
        let names = ["redis://a:6379", "redis://b:6379", "redis://c:6379"]
        let three = RendezvousHashing(nodes: names)
        let two = RendezvousHashing(nodes: [names[0], names[2]])
        var moved = 0
        for key in keys {
            let before = names[three.node(for: key)!]
            let after = two.nodes[two.node(for: key)!]
            if before != names[1] {
                #expect(before == after, "a key of a remaining node stays")
            } else {
                moved += 1
                #expect(after == names[three.ranking(for: key)[1]], "a lost key goes to its second choice")
            }
        }
        #expect(abs(Double(moved) / Double(keys.count) - 1.0 / 3.0) <= 0.05)
    }

    @Test func addingANodeMovesOnlyTheKeysItTakes() {
        let names = ["redis://a:6379", "redis://b:6379", "redis://c:6379"]
        let three = RendezvousHashing(nodes: names)
        let four = RendezvousHashing(nodes: names + ["redis://d:6379"])
        var taken = 0
        for key in keys {
            let after = four.nodes[four.node(for: key)!]
            if after == "redis://d:6379" { taken += 1 } else { #expect(after == names[three.node(for: key)!]) }
        }
        #expect(abs(Double(taken) / Double(keys.count) - 0.25) <= 0.05)
    }

    @Test func placementDependsOnNamesNotOrder() {
        let a = RendezvousHashing(nodes: ["x", "y", "z"]), b = RendezvousHashing(nodes: ["z", "x", "y"])
        for key in keys.prefix(500) { #expect(a.nodes[a.node(for: key)!] == b.nodes[b.node(for: key)!]) }
        #expect(RendezvousHashing(nodes: []).node(for: "k") == nil)
    }
}

@Suite("Circuit breaker")
struct CircuitBreakerTests {
    @Test func opensAfterKFailuresSkipsForTThenProbes() {
        var breaker = CircuitBreaker(config: .init(failureThreshold: 3, openDuration: .seconds(2)))
        let start = ContinuousClock.now
        var outcome = breaker.allowsRequest(at: start)
        #expect(outcome)
        outcome = breaker.recordFailure(at: start)
        #expect(!outcome)
        outcome = breaker.recordFailure(at: start)
        #expect(!outcome)
        outcome = breaker.recordFailure(at: start)
        #expect(outcome, "the third failure in a row opens it")
        #expect(!breaker.isClosed)
        outcome = breaker.allowsRequest(at: start.advanced(by: .seconds(1)))
        #expect(!outcome)
        outcome = breaker.allowsRequest(at: start.advanced(by: .seconds(2)))
        #expect(outcome, "one probe after T")
        #expect(breaker.state == .halfOpen)
        outcome = breaker.allowsRequest(at: start.advanced(by: .seconds(2)))
        #expect(!outcome, "only one probe at a time")
        outcome = breaker.recordFailure(at: start.advanced(by: .seconds(2)))
        #expect(outcome, "a failed probe opens it again")
        #expect(breaker.openings == 2)
        outcome = breaker.allowsRequest(at: start.advanced(by: .seconds(4)))
        #expect(outcome)
        breaker.recordSuccess()
        #expect(breaker.isClosed)
        // A success resets the count of failures in a row.
        breaker.recordFailure(at: start)
        breaker.recordFailure(at: start)
        breaker.recordSuccess()
        outcome = breaker.recordFailure(at: start)
        #expect(!outcome)
        #expect(breaker.isClosed)
    }
}
