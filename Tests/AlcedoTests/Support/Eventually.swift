import Foundation

/// Polls `condition` every 5 ms until it holds or `seconds` pass (a bound, not a timing claim:
/// generous, because CPU-heavy suites running alongside can starve the cooperative pool);
/// `false` if it never holds.
func eventually(within seconds: Double = 30, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while !condition() {
        if ContinuousClock.now > deadline { return false }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return true
}
