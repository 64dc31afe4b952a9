@testable import Alcedo
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("ProcessMemory: the allocator's controls")
struct ProcessMemoryTests {
    #if canImport(Glibc)
    @Test func aLargeBlockFreedGoesBackToTheSystemNotIntoTheHeaps() throws {
        #expect(ProcessMemory.setLargeAllocationThreshold(1 << 20))
        let size = 8 << 20
        func allocateTouchAndFree() throws {
            let block = try #require(malloc(size))
            memset(block, 1, size)
            free(block)
        }
        // Without a fixed threshold, glibc raises it to 8 MiB at this first free, and the next
        // block of that size is carved from a heap and stays there when freed.
        try allocateTouchAndFree()
        let before = try #require(ProcessMemory.freeHeapBytes())
        try allocateTouchAndFree()
        // Mapped apart and unmapped on free: the heaps did not keep its 8 MiB.
        let after = try #require(ProcessMemory.freeHeapBytes())
        #expect(after - before < size, "free heap bytes \(before) -> \(after)")
    }
    #endif
}
