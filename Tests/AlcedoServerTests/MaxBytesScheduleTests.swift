import Testing
@testable import AlcedoServer

/// `max_bytes`: the qualities tried after a result that is too large, as imgproxy and thumbor
/// choose them, and how many encodes that can take.
@Suite("max_bytes schedules")
struct MaxBytesScheduleTests {
    @Test("imgproxy: the quality times 0.25, 0.5 or 0.75 by how far over the limit; none after 10 or less")
    func imgproxy() {
        let schedule = MaxBytesSchedule.imgproxy
        #expect(schedule.nextQuality(after: 80, size: 3_100, limit: 1_000) == 20)
        #expect(schedule.nextQuality(after: 80, size: 3_000, limit: 1_000) == 40)
        #expect(schedule.nextQuality(after: 80, size: 1_600, limit: 1_000) == 40)
        #expect(schedule.nextQuality(after: 80, size: 1_500, limit: 1_000) == 60)
        #expect(schedule.nextQuality(after: 11, size: 1_100, limit: 1_000) == 8)
        #expect(schedule.nextQuality(after: 10, size: 5_000, limit: 1_000) == nil)
        #expect(schedule.nextQuality(after: 3, size: 5_000, limit: 1_000) == nil)
    }

    @Test("thumbor: the quality times 0.75; none when it would go under 10")
    func thumbor() {
        var qualities: [Int] = []
        var quality = 80
        while let next = MaxBytesSchedule.thumbor.nextQuality(after: quality, size: 2_000, limit: 1_000) {
            qualities.append(next)
            quality = next
        }
        #expect(qualities == [60, 45, 33, 24, 18, 13])
    }

    @Test("the number of encodes is bounded whatever the sizes: at most 9 from quality 100", arguments: [MaxBytesSchedule.imgproxy, .thumbor])
    func bounded(schedule: MaxBytesSchedule) {
        for start in 1...100 {
            for ratio in [1.01, 1.6, 3.5, 1_000] {
                var quality = start
                var encodes = 1
                while let next = schedule.nextQuality(after: quality, size: Int(1_000 * ratio), limit: 1_000) {
                    #expect(next < quality)
                    quality = next
                    encodes += 1
                }
                #expect(encodes <= 9, "\(schedule) from \(start) at \(ratio)x: \(encodes)")
            }
        }
    }
}
