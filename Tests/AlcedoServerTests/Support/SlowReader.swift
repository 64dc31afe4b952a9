import AlcedoTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A client on a real socket with a small receive buffer that sends one GET and reads the
/// answer one byte a second, on a thread of its own (it blocks), until told to stop; then it
/// reads what is left as fast as it comes, to see whether the server ended the response early.
enum SlowReader {
    struct Outcome: Sendable {
        /// Bytes read, head and body.
        let received: Int
        /// The head and body length the server announced (`nil` if no head was read).
        let announced: Int?
        /// The connection ended (end of stream or reset) rather than the drain timing out.
        let closed: Bool

        /// Whether the whole response arrived.
        var complete: Bool { announced.map { received >= $0 } ?? false }
    }

    /// Connects to 127.0.0.1:`port`, sends `GET path` and reads slowly while `stop` is false
    /// (at most `limit`); `progress` is raised by each byte read.
    static func read(port: Int, path: String, stop: Locked<Bool>, progress: Locked<Int>,
                     limit: Duration = .seconds(120)) async -> Outcome {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(returning: blockingRead(port: port, path: path, stop: stop, progress: progress, limit: limit))
            }
        }
    }

    private static func blockingRead(port: Int, path: String, stop: Locked<Bool>, progress: Locked<Int>,
                                     limit: Duration) -> Outcome {
        // A small receive buffer: the server's writes block after a few kilobytes.
        let fd = LoopbackPort.connect(port, receiveBuffer: 4096, receiveTimeout: 30)
        guard fd >= 0 else { return Outcome(received: 0, announced: nil, closed: true) }
        defer { close(fd) }
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
        var head = [UInt8]()
        var received = 0
        var byte: UInt8 = 0
        let deadline = ContinuousClock.now + limit
        while !stop.value && ContinuousClock.now < deadline {
            let count = recv(fd, &byte, 1, 0)
            if count <= 0 { return Outcome(received: received, announced: announced(head), closed: true) }
            received += 1
            if head.count < 4096 { head.append(byte) }
            progress.withLock { $0 += 1 }
            usleep(1_000_000)
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { return Outcome(received: received, announced: announced(head), closed: true) }
            if count < 0 {
                let timedOut = errno == EAGAIN || errno == EWOULDBLOCK
                return Outcome(received: received, announced: announced(head), closed: !timedOut)
            }
            if head.count < 4096 { head.append(contentsOf: buffer[0..<min(count, 4096 - head.count)]) }
            received += count
        }
    }

    /// The head's length plus its `Content-Length`.
    private static func announced(_ head: [UInt8]) -> Int? {
        let text = String(decoding: head, as: UTF8.self)
        guard let end = text.range(of: "\r\n\r\n") else { return nil }
        let headText = text[..<end.lowerBound].lowercased()
        guard let line = headText.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
              let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) else { return nil }
        return text.utf8.distance(from: text.utf8.startIndex, to: end.upperBound) + length
    }
}
