import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// Watches whether this machine is connected to a network (Kingfisher's `NetworkMonitoring`),
/// for ``NetworkRetryStrategy``; implement it to decide connectivity yourself, as a test does.
public protocol NetworkMonitoring: Sendable {
    /// `true` when the network is available now.
    var isConnected: Bool { get }

    /// Calls `callback` once: with `true` when the network is available again, or with `false`
    /// when `timeoutInterval` seconds pass first (`nil`: no time limit). The returned observer
    /// stops the watch (then `callback` is not called).
    func observeConnectivity(timeoutInterval: TimeInterval?, callback: @escaping @Sendable (Bool) -> Void) -> any NetworkObserver
}

/// A watch started by ``NetworkMonitoring/observeConnectivity(timeoutInterval:callback:)``
/// (Kingfisher's `NetworkObserver`).
public protocol NetworkObserver: Sendable {
    /// Stops the watch; its callback is not called after this.
    func cancel()
}

/// The network monitor of Linux: connectivity is a route to the internet as the kernel sees it,
/// checked by connecting a UDP socket to a public address (which sends nothing), and polled every
/// ``pollInterval`` while someone waits for the network, since Linux has no path monitor that
/// announces changes (Kingfisher's `NetworkMonitor` uses `NWPathMonitor`).
public final class NetworkMonitor: NetworkMonitoring {
    /// The shared monitor (polls every second).
    public static let `default` = NetworkMonitor()

    /// How often connectivity is checked while an observer waits (default 1 s).
    public let pollInterval: Duration

    private struct State {
        var observers: [NetworkObserverImpl] = []
        var polling = false
    }

    private let state = Mutex(State())

    /// Creates a monitor that checks every `pollInterval` (default 1 s) while an observer waits.
    public init(pollInterval: Duration = .seconds(1)) {
        self.pollInterval = pollInterval
    }

    /// `true` when the kernel has a route to the internet (IPv4 or IPv6).
    public var isConnected: Bool {
        RouteReachability.hasRoute(host: "192.0.2.1", port: 53) || RouteReachability.hasRoute(host: "2001:db8::1", port: 53)
    }

    public func observeConnectivity(timeoutInterval: TimeInterval?,
                                    callback: @escaping @Sendable (Bool) -> Void) -> any NetworkObserver {
        let observer = NetworkObserverImpl(timeoutInterval: timeoutInterval, callback: callback, monitor: self)
        let startsPolling = state.withLock { state in
            state.observers.append(observer)
            defer { state.polling = true }
            return !state.polling
        }
        if startsPolling { Task { await poll() } }
        return observer
    }

    /// Checks connectivity every ``pollInterval`` while observers wait; tells them all when it is there.
    private func poll() async {
        while true {
            try? await Task.sleep(for: max(pollInterval, .milliseconds(1)))
            let waiting = state.withLock { state in
                if state.observers.isEmpty { state.polling = false }
                return !state.observers.isEmpty
            }
            guard waiting else { return }
            guard isConnected else { continue }
            let observers = state.withLock { state in
                defer { state.observers.removeAll() }
                return state.observers
            }
            for observer in observers { observer.notify(isConnected: true) }
        }
    }

    /// Forgets an observer that finished.
    func removeObserver(_ observer: NetworkObserverImpl) {
        state.withLock { state in state.observers.removeAll { $0 === observer } }
    }
}

/// The observer ``NetworkMonitor`` hands out: calls its callback once, on a global queue, with
/// the first of a connectivity notice or its time limit; nothing after ``cancel()``.
final class NetworkObserverImpl: NetworkObserver {
    /// The time limit in seconds, `nil` for none.
    let timeoutInterval: TimeInterval?
    /// Told `true` when the network is back, `false` on the time limit.
    let callback: @Sendable (Bool) -> Void
    private weak let monitor: NetworkMonitor?
    private let finished = Mutex(false)

    init(timeoutInterval: TimeInterval?, callback: @escaping @Sendable (Bool) -> Void, monitor: NetworkMonitor) {
        self.timeoutInterval = timeoutInterval
        self.callback = callback
        self.monitor = monitor
        if let timeoutInterval {
            DispatchQueue.global().asyncAfter(deadline: .now() + max(0, timeoutInterval)) { [weak self] in
                self?.notify(isConnected: false)
            }
        }
    }

    /// Calls the callback with `isConnected` unless it was called or the observer cancelled.
    func notify(isConnected: Bool) {
        guard finish() else { return }
        let callback = self.callback
        DispatchQueue.global().async { callback(isConnected) }
    }

    func cancel() {
        _ = finish()
    }

    /// `true` for the first caller only.
    private func finish() -> Bool {
        let first = finished.withLock { done in
            defer { done = true }
            return !done
        }
        if first { monitor?.removeObserver(self) }
        return first
    }
}
