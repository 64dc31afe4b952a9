import Foundation
import Synchronization
import Testing
@testable import Alcedo

/// The body buffer a download appends to, and the catch-up a caller joining a coalesced
/// download gets: the bytes so far in one piece, then every later chunk, no gap, no repeat.
@Suite("Progress catch-up for joining callers")
struct ProgressCatchUpTests {
    private static func byte(_ index: Int) -> UInt8 { UInt8(truncatingIfNeeded: index &* 31 &+ index >> 8) }

    @Test("prefixes share the buffer and stay the same while it grows past its capacity")
    func receivedBodyPrefixes() {
        let body = ReceivedBody(capacity: 10)
        #expect(body.prefix(5).isEmpty)
        var expected = Data()
        var views: [Data] = []
        for step in 0..<200 {
            let chunk = Data((0..<(step % 7 + 1)).map { Self.byte(expected.count + $0) })
            body.append(chunk)
            expected.append(chunk)
            views.append(body.prefix(expected.count))
        }
        body.append(Data())
        #expect(body.count == expected.count)
        #expect(body.prefix(expected.count) == expected)
        #expect(body.prefix(expected.count + 100) == expected)  // never past what arrived
        #expect(body.prefix(-1).isEmpty)
        // Every view taken along the way still holds the bytes it was given, across reallocations.
        for view in views { #expect(view == expected.prefix(view.count)) }
    }

    @Test("the completed body shares an exactly filled buffer and copies an over-allocated one")
    func completedBody() {
        let bytes = Data((0..<5000).map { Self.byte($0) })
        let exact = ReceivedBody(capacity: bytes.count)
        exact.append(bytes)
        let shared = exact.completed()
        #expect(shared == bytes)
        #expect(Self.address(shared) == Self.address(exact.prefix(bytes.count)), "no copy when the length was announced")

        let unknown = ReceivedBody()  // grows to at least 16 KB for 5,000 bytes
        unknown.append(bytes)
        let copied = unknown.completed()
        #expect(copied == bytes)
        #expect(Self.address(copied) != Self.address(unknown.prefix(bytes.count)),
                "a body smaller than its block does not keep the block alive")
        #expect(ReceivedBody().completed().isEmpty)
    }

    private static func address(_ data: Data) -> UnsafeRawPointer? {
        data.withUnsafeBytes { $0.baseAddress }
    }

    @Test("changing a view changes neither the buffer nor another view")
    func viewsAreValues() {
        let body = ReceivedBody(capacity: 64)
        let bytes = Data((0..<64).map { Self.byte($0) })
        body.append(bytes)
        var view = body.prefix(64)
        let other = body.prefix(64)
        view[0] = ~bytes[0]
        view.append(1)
        #expect(other == bytes)
        #expect(body.prefix(64) == bytes)
    }

    /// Reports `chunk` after the bytes so far, as the downloader does.
    private static func report(_ body: ReceivedBody, _ count: Int, context: RequestCoalescer<String, Int>.WorkContext) {
        let chunk = Data((body.count..<count).map { byte($0) })
        body.append(chunk)
        context.reportProgress(DownloadProgress(receivedBytes: count, expectedBytes: nil, chunk: chunk, body: body))
    }

    @Test("callers joining while chunks arrive each get the whole body, in order, with no gap or repeat")
    func joinersGetContiguousBytes() async throws {
        let coalescer = RequestCoalescer<String, Int>()
        let joinerCount = 24
        let joined = Mutex(0)
        let body = ReceivedBody()
        let work: RequestCoalescer<String, Int>.Work = { context in
            // Chunks keep coming, from this task, while the callers join from another thread;
            // the body ends only once every caller is in.
            var count = 0
            while joined.withLock({ $0 }) < joinerCount || count < 4000 {
                count += 1 + count % 3
                Self.report(body, count, context: context)
                if count % 64 == 0 { await Task.yield() }
            }
            for _ in 0..<50 { count += 1; Self.report(body, count, context: context) }
            return .success(count)
        }
        let reports = (0...joinerCount).map { _ in Collected<DownloadProgress>() }
        let results = Collected<Result<Int, AlcedoError>>()
        _ = coalescer.subscribe("k", priority: PriorityTicket(priority: .normal), progress: { reports[0].append($0) },
                                completion: { results.append($0) }, work: work)
        let joiners = Thread {
            for index in 1...joinerCount {
                // Join at different points of the stream.
                // Waits without spinning hard: a loaded machine must still run the producer.
                while reports[0].count < index * 40 { usleep(100) }
                _ = coalescer.subscribe("k", priority: PriorityTicket(priority: .normal), progress: { reports[index].append($0) },
                                        completion: { results.append($0) }, work: work)
                joined.withLock { $0 += 1 }
            }
        }
        joiners.start()
        #expect(await eventually { results.values.count == joinerCount + 1 })
        let total = try #require(try results.values.first?.get())
        let whole = body.prefix(total)
        #expect(whole.count == total)
        for (index, caller) in reports.enumerated() {
            let values = caller.values
            var assembled = Data()
            var gap: (at: Int, chunkStart: Int)?
            for value in values {
                let chunk = try #require(value.chunk, "caller \(index)")
                // Each report continues exactly where the last one ended.
                if value.receivedBytes - chunk.count != assembled.count {
                    gap = (assembled.count, value.receivedBytes - chunk.count)
                    break
                }
                assembled.append(chunk)
            }
            #expect(gap == nil, "caller \(index): after \(gap?.at ?? 0) bytes came a chunk starting at \(gap?.chunkStart ?? 0)")
            #expect(gap != nil || assembled == whole, "caller \(index)")
            if index > 0 { #expect((values.first?.receivedBytes ?? 0) >= index * 40, "caller \(index) joined late") }
        }
    }

    @Test("a caller joining before any progress gets no catch-up; a plain progress value carries no chunk")
    func nothingToCatchUp() async {
        let coalescer = RequestCoalescer<String, Int>()
        let gate = Mutex<CheckedContinuation<Void, Never>?>(nil)
        let reports = Collected<DownloadProgress>()
        let results = Collected<Result<Int, AlcedoError>>()
        let work: RequestCoalescer<String, Int>.Work = { context in
            await withCheckedContinuation { continuation in gate.withLock { $0 = continuation } }
            context.reportProgress(DownloadProgress(receivedBytes: 7, expectedBytes: 9))
            return .success(1)
        }
        _ = coalescer.subscribe("k", priority: PriorityTicket(priority: .normal), progress: nil,
                                completion: { results.append($0) }, work: work)
        _ = coalescer.subscribe("k", priority: PriorityTicket(priority: .normal), progress: { reports.append($0) },
                                completion: { results.append($0) }, work: work)
        #expect(reports.values.isEmpty)
        #expect(await eventually { gate.withLock { $0 != nil } })
        gate.withLock { $0?.resume() }
        #expect(await eventually { results.values.count == 2 })
        let late = Collected<DownloadProgress>()
        #expect(reports.values == [DownloadProgress(receivedBytes: 7, expectedBytes: 9)])
        #expect(reports.values.first?.chunk == nil)
        // Once finished, a new caller starts new work: nothing of the old one is replayed.
        _ = coalescer.subscribe("k", priority: PriorityTicket(priority: .normal), progress: { late.append($0) },
                                completion: { _ in }, work: { _ in .success(2) })
        #expect(late.values.isEmpty)
    }
}
