import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// What the standard streams are connected to.
enum Terminal {
    /// `true` when standard error is a terminal: live progress is drawn there, so standard
    /// output stays clean for results and machine-readable when piped.
    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// `true` when standard output is a terminal.
    static var stdoutIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

    /// The width of the terminal on standard error in columns (80 when unknown).
    static var width: Int {
        var size = winsize()
        guard ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }

    /// Writes `text` to standard error as it is (no newline added).
    static func writeToStderr(_ text: String) {
        Console.write(text, to: STDERR_FILENO)
    }
}

/// Human-readable quantities for progress lines and tables.
enum Formatting {
    /// `512 B`, `14.2 KB`, `3.1 MB` (powers of 1024).
    static func bytes(_ count: Int) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(count) B" : String(cFormat: "%.1f", value) + " " + units[unit]
    }

    /// `0.4`, `12.3`, `1250` milliseconds: one decimal below 100 ms.
    static func milliseconds(_ value: Double) -> String {
        value < 100 ? String(cFormat: "%.1f", value) : String(Int(value.rounded()))
    }

    /// `0.4 s`, `12.5 s` below a minute, then as ``duration(_:)``: for elapsed times.
    static func elapsed(_ seconds: Double) -> String {
        seconds < 60 ? String(cFormat: "%.1f s", seconds) : duration(seconds)
    }

    /// `42s`, `3m05s`, `1h02m` for an estimated time; `--` when unknown.
    static func duration(_ seconds: Double?) -> String {
        guard let seconds, seconds.isFinite, seconds >= 0 else { return "--" }
        let total = Int(seconds.rounded(.up))
        if total < 60 { return "\(total)s" }
        if total < 3600 { return String(cFormat: "%ldm%02lds", total / 60, total % 60) }
        return String(cFormat: "%ldh%02ldm", total / 3600, (total % 3600) / 60)
    }
}
