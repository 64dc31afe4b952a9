#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// A live progress line for a batch of items, drawn on standard error only when it is a
/// terminal; when it is not, nothing is drawn and the caller prints plain summary lines.
///
/// The line shows a bar, items done of the total, completed, skipped and failed counts, the
/// transfer rate and an estimate of the time left:
/// `prefetch [#########-----------]  9/20  completed 7  skipped 1  failed 1  1.2 MB/s  ETA 3s`.
/// It is redrawn at most every 80 ms (and always when the last item ends). Safe to update
/// from many tasks at once.
final class ProgressBar: Sendable {
    /// How one item ended.
    enum Outcome: Sendable {
        /// Done: fetched, processed or stored.
        case completed
        /// Nothing to do (for example already cached).
        case skipped
        case failed
    }

    /// Items ended so far, by outcome, and the bytes they moved.
    struct Counts: Sendable, Equatable {
        var completed = 0
        var skipped = 0
        var failed = 0
        var bytes = 0

        var done: Int { completed + skipped + failed }
    }

    private struct State {
        var counts = Counts()
        var lastDraw: ContinuousClock.Instant?
        var isDrawn = false
        var isFinished = false
    }

    /// The word before the bar (`fetch`, `prefetch`).
    let title: String
    /// How many items the batch has.
    let total: Int
    /// Whether the bar is drawn (standard error is a terminal).
    let isLive: Bool
    private let start = ContinuousClock.now
    private let state = Mutex(State())

    /// A bar for `total` items. `live` defaults to whether standard error is a terminal.
    init(title: String, total: Int, live: Bool = Terminal.stderrIsTerminal) {
        self.title = title
        self.total = total
        self.isLive = live
    }

    /// Counts one item that ended with `outcome` after moving `bytes`, and redraws.
    func record(_ outcome: Outcome, bytes: Int = 0) {
        state.withLock { state in
            switch outcome {
            case .completed: state.counts.completed += 1
            case .skipped: state.counts.skipped += 1
            case .failed: state.counts.failed += 1
            }
            state.counts.bytes += max(0, bytes)
            drawIfDue(&state, force: state.counts.done >= total)
        }
    }

    /// Counts `bytes` moved by an item still in flight, and redraws when due.
    func addBytes(_ bytes: Int) {
        state.withLock { state in
            state.counts.bytes += max(0, bytes)
            drawIfDue(&state, force: false)
        }
    }

    /// Draws the bar now (at the start of a batch, so it shows before the first item ends).
    func show() {
        state.withLock { drawIfDue(&$0, force: true) }
    }

    /// Prints `text` as a line above the bar, on standard output or standard error, and
    /// draws the bar again below it.
    func printLine(_ text: String, toStandardError: Bool = false) {
        state.withLock { state in
            clear(&state)
            if toStandardError { Console.error(text) } else { Console.line(text) }
            drawIfDue(&state, force: true)
        }
    }

    /// Removes the bar from the terminal and stops drawing it. Returns the final counts.
    @discardableResult
    func finish() -> Counts {
        state.withLock { state in
            clear(&state)
            state.isFinished = true
            return state.counts
        }
    }

    /// The counts so far.
    var counts: Counts { state.withLock { $0.counts } }

    /// Time since the bar was made.
    var elapsed: Duration { ContinuousClock.now - start }

    private func drawIfDue(_ state: inout State, force: Bool) {
        guard isLive, !state.isFinished else { return }
        let now = ContinuousClock.now
        if !force, let last = state.lastDraw, now - last < .milliseconds(80) { return }
        state.lastDraw = now
        let text = Self.line(title: title, counts: state.counts, total: total,
                             elapsed: Self.seconds(now - start), width: Terminal.width)
        Terminal.writeToStderr("\r\u{1B}[2K" + text)
        state.isDrawn = true
    }

    private func clear(_ state: inout State) {
        guard isLive, state.isDrawn else { return }
        Terminal.writeToStderr("\r\u{1B}[2K")
        state.isDrawn = false
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// The text of the bar for `counts` of `total` after `elapsed` seconds, fitted to `width`
    /// columns: the bar shrinks first (to 10 columns), then the labels get short
    /// (`ok`, `skip`, `fail`), then the bar is left out.
    static func line(title: String, counts: Counts, total: Int, elapsed: Double, width: Int) -> String {
        let rate = elapsed > 0 ? Double(counts.bytes) / elapsed : 0
        let remaining = max(0, total - counts.done)
        let eta: Double? = counts.done > 0 && elapsed > 0 ? Double(remaining) * elapsed / Double(counts.done) : nil
        let tail = "  \(Formatting.bytes(Int(rate)))/s"
            + (remaining == 0 ? "  \(Formatting.elapsed(elapsed))" : "  ETA \(Formatting.duration(eta))")
        let long = "\(counts.done)/\(total)  completed \(counts.completed)  skipped \(counts.skipped)  failed \(counts.failed)" + tail
        let short = "\(counts.done)/\(total) ok \(counts.completed) skip \(counts.skipped) fail \(counts.failed)" + tail
        let room = width - 1 - title.count - 5
        let details = room - long.count >= 10 ? long : short
        let barWidth = min(30, room - details.count)
        guard barWidth >= 10 else { return String("\(title) \(details)".prefix(max(0, width - 1))) }
        let fraction = total > 0 ? min(1, Double(counts.done) / Double(total)) : 1
        let filled = Int((fraction * Double(barWidth)).rounded(.down))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: barWidth - filled)
        return "\(title) [\(bar)]  \(details)"
    }
}
