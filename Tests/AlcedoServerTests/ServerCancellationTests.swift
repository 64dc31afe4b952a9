@testable import AlcedoServer
import AlcedoTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// Cancelling the task that runs ``ImageServer/run(signals:onListening:)`` while the listener
/// holds connections it accepted but has not handed to a handler yet. A cancelled listener
/// drops them, and NIO traps on each dropped connection's writer ("Deinited NIOAsyncWriter
/// without calling finish()"), which ends the whole process; the server shuts down gracefully
/// instead, so this test fails by crashing the test process.
@Suite("Server: cancelled while connections wait to be served")
struct ServerCancellationTests {
    @Test("a burst of connections then a cancellation: the server stops gracefully and the process lives on",
          arguments: [false, true])
    func cancellingWithAcceptedConnectionsStopsGracefully(sharesPort: Bool) async throws {
        // One round was enough to trap before the fix on an idle machine; a few make it sure
        // under load too.
        for _ in 0..<4 {
            let harness = try await ServerHarness.start { $0.sharesPort = sharesPort }
            let port = try #require(harness.baseURL.split(separator: ":").last.flatMap { Int($0) })
            // Half of the connections send a request, half stay silent.
            let sockets = await offPool { Self.connect(port: port, count: 64) }
            #expect(sockets.count == 64)
            let started = ContinuousClock.now
            await harness.stop()
            // Silent connections are idle and closed at once; requests in flight finish.
            #expect(ContinuousClock.now - started < .seconds(120))
            for fd in sockets { close(fd) }
            // The listener is closed.
            #expect(LoopbackPort.connect(port).closingRefused())
        }
    }

    /// Opens `count` connections to 127.0.0.1:`port`; every other one sends a health check.
    static func connect(port: Int, count: Int) -> [Int32] {
        var sockets = [Int32]()
        for index in 0..<count {
            let fd = LoopbackPort.connect(port)
            guard fd >= 0 else { continue }
            if index.isMultiple(of: 2) {
                let request = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                _ = request.withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
            }
            sockets.append(fd)
        }
        return sockets
    }
}

extension Int32 {
    /// For a descriptor from ``LoopbackPort/connect(_:receiveBuffer:receiveTimeout:)``: whether
    /// the connection was refused (-1); a connected descriptor is closed.
    fileprivate func closingRefused() -> Bool {
        guard self >= 0 else { return true }
        close(self)
        return false
    }
}
