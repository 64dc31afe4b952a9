import Logging
import Synchronization

/// Keeps what a logger logs, so tests can count and read the lines.
public final class CapturedLog: Sendable {
    private let lines = Mutex<[(level: Logger.Level, message: String)]>([])

    public init() {}

    /// Every line as `level: message`.
    public var all: [String] { lines.withLock { $0.map { "\($0.level): \($0.message)" } } }
    /// Every message, without its level.
    public var messages: [String] { lines.withLock { $0.map(\.message) } }
    /// How many lines were logged at `level`.
    public func count(_ level: Logger.Level) -> Int { lines.withLock { $0.filter { $0.level == level }.count } }

    /// A logger that writes here, at every level.
    public var logger: Logger {
        Logger(label: "test") { _ in Handler(log: self) }
    }

    struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            log.lines.withLock { $0.append((event.level, event.message.description)) }
        }
    }
}
