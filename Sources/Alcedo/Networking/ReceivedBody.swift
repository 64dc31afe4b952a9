#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// The body of one download as it arrives: an append-only buffer whose bytes, once written,
/// never change, so any prefix of it can be handed out as `Data` that shares the buffer.
///
/// The downloader appends each chunk and, at the end, takes the whole body with
/// ``completed()`` (no copy when the announced length was right). A caller that joins the download while it runs gets the bytes
/// received so far the same way (see ``RequestCoalescer``). When the buffer must grow (a body
/// without `Content-Length`, or longer than announced), the bytes move to a larger block; views
/// taken before keep the old block alive until they are gone.
final class ReceivedBody: Sendable {
    /// One block of memory, owned by ``bytes``: a `Data` over the whole block that the views
    /// are slices of. The block keeps that `Data` while the body is in use, so its storage is
    /// never uniquely referenced by a view: a view that is changed copies its bytes first
    /// instead of writing into the block. Only the bytes below the published count are read,
    /// and they were written (through ``base``, under the body's lock) before the count was
    /// published under the same lock: the lock earns the conformance.
    private final class Block: @unchecked Sendable {
        let base: UnsafeMutableRawPointer
        let capacity: Int
        let bytes: Data

        init(capacity: Int) {
            // Never small enough for `Data` to keep inline (a copy, with the block freed at once).
            let capacity = max(capacity, 64)
            self.capacity = capacity
            base = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
            bytes = Data(bytesNoCopy: base, count: capacity, deallocator: .custom { pointer, _ in pointer.deallocate() })
        }
    }

    private struct State {
        var block: Block
        var count = 0
    }

    /// The smallest block allocated when the length is unknown.
    private static let minimumGrowth = 16 * 1024

    private let state: Mutex<State>

    /// Creates an empty body with room for `capacity` bytes (the announced length, if any).
    init(capacity: Int = 0) {
        state = Mutex(State(block: Block(capacity: capacity)))
    }

    /// Bytes received so far.
    var count: Int { state.withLock { $0.count } }

    /// Bytes of the buffer the body is in now (what it holds in memory).
    var capacity: Int { state.withLock { $0.block.capacity } }

    /// Appends `chunk` after the bytes received so far.
    func append(_ chunk: Data) {
        guard !chunk.isEmpty else { return }
        state.withLock { state in
            let needed = state.count + chunk.count
            if needed > state.block.capacity {
                let grown = Block(capacity: max(needed, state.block.capacity * 2, Self.minimumGrowth))
                grown.base.copyMemory(from: state.block.base, byteCount: state.count)
                state.block = grown
            }
            let destination = state.block.base + state.count
            chunk.withUnsafeBytes { bytes in
                destination.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
            }
            state.count = needed
        }
    }

    /// The whole body, to keep once the download ended: the buffer itself when the body
    /// filled it exactly (the announced length), otherwise a copy of just the bytes received,
    /// so that a body of unknown length does not keep a block of up to twice its size alive
    /// in the caches, which count only the bytes.
    func completed() -> Data {
        let (block, count) = state.withLock { ($0.block, $0.count) }
        guard count > 0 else { return Data() }
        return count == block.capacity ? block.bytes : Data(block.bytes[0..<count])
    }

    /// The first `length` bytes (at most ``count``), sharing the buffer: no copy.
    func prefix(_ length: Int) -> Data {
        let (block, available) = state.withLock { ($0.block, $0.count) }
        let length = min(max(0, length), available)
        guard length > 0 else { return Data() }
        return block.bytes[0..<length]
    }
}
