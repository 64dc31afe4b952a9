// Nocilla's names (`LSNocilla`, `LSStubResponseDSL`) over a real HTTP server on 127.0.0.1, so
// that Kingfisher's tests, which start, stub and clear through them, run unchanged against
// Alcedo. Requests to a stubbed host reach the server through Alcedo's loopback routing
// (`LoopbackRouting`): `https://example.com/a.png` is served as `/example.com/a.png`.

import Foundation
import Synchronization
@testable import Alcedo

/// The stub registry: one loopback server for the whole test run.
final class LSNocilla: Sendable {
    private static let shared = LSNocilla()

    private let server: TestHTTPServer
    private let held = Mutex<Set<String>>([])

    static func sharedInstance() -> LSNocilla { shared }

    private init() {
        let box = Mutex<TestHTTPServer?>(nil)
        let started = DispatchSemaphore(value: 0)
        Task.detached {
            let server = try? await TestHTTPServer.start()
            box.withLock { $0 = server }
            started.signal()
        }
        started.wait()
        guard let server = box.withLock({ $0 }) else { fatalError("the loopback stub server did not start") }
        self.server = server
    }

    /// Nocilla's start: the server runs from the first use on.
    func start() {}

    /// Nocilla's stop: stubbed hosts are no longer routed to the server.
    func stop() {
        clearStubs()
        LoopbackRouting.routes.withLock { $0 = [:] }
    }

    /// Forgets every stub and sends the responses still held.
    func clearStubs() {
        server.removeAllRoutes()
        let paths = held.withLock { paths in
            defer { paths = [] }
            return paths
        }
        for path in paths { server.release(path) }
    }

    /// Serves `response` for `url` (any query) and routes its host to the server.
    @discardableResult
    func stub(_ url: URL, _ response: TestHTTPServer.Response) -> LSStubResponseDSL {
        let host = url.host ?? "localhost"
        LoopbackRouting.routes.withLock { $0[host] = server.port }
        let path = "/" + host + url.path
        server.route(path, response)
        return LSStubResponseDSL(path: path, registry: self)
    }

    fileprivate func hold(_ path: String) {
        held.withLock { _ = $0.insert(path) }
        server.hold(path)
    }

    fileprivate func release(_ path: String) {
        held.withLock { _ = $0.remove(path) }
        server.release(path)
    }
}

/// A stubbed response (Nocilla's `LSStubResponseDSL`): `delay()` holds it until `go()`.
final class LSStubResponseDSL: Sendable {
    let path: String
    private let registry: LSNocilla

    fileprivate init(path: String, registry: LSNocilla) {
        self.path = path
        self.registry = registry
    }

    /// Holds the response until ``go()``.
    func delay() -> LSStubResponseDSL? {
        registry.hold(path)
        return self
    }

    /// Sends the held response.
    func go() -> LSStubResponseDSL? {
        registry.release(path)
        return self
    }
}
