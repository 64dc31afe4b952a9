import Synchronization

/// The bookkeeping of one retrieval across its sources (Kingfisher's internal type of the same
/// name): the options it runs with, the source it started from, the alternative sources not
/// tried yet, the Low Data Mode source not used yet, and the failures so far.
///
/// The manager makes one per retrieval and asks it for the next source each time a source
/// fails; the failures it collects become ``ImageSettingErrorReason/alternativeSourcesExhausted(_:)``
/// when none is left. Every read and change is one critical section, so failovers racing on
/// several threads never hand out a source twice or lose a failure.
final class RetrievingContext<SourceType: Sendable>: Sendable {
    private struct State {
        var options: AlcedoParsedOptionsInfo
        var failures: [PropagationError] = []
    }

    private let state: Mutex<State>

    /// The source the retrieval started from: every result's ``RetrieveImageResult/originalSource``.
    let originalSource: SourceType

    /// Creates the context of a retrieval that starts from `originalSource`.
    /// - Parameters:
    ///   - options: the retrieval's options; their ``AlcedoParsedOptionsInfo/alternativeSources``
    ///     and ``AlcedoParsedOptionsInfo/lowDataModeSource`` are handed out by
    ///     ``popAlternativeSource()`` and ``takeLowDataModeSource()``.
    ///   - originalSource: the source asked for.
    init(options: AlcedoParsedOptionsInfo, originalSource: SourceType) {
        self.originalSource = originalSource
        state = Mutex(State(options: options))
    }

    /// The retrieval's options as they are now: without the alternative sources already
    /// handed out, and without the Low Data Mode source once it is taken.
    var options: AlcedoParsedOptionsInfo {
        state.withLock { $0.options }
    }

    /// The failures recorded so far, in the order they were recorded.
    var propagationErrors: [PropagationError] {
        state.withLock { $0.failures }
    }

    /// Removes and returns the first alternative source not tried yet; `nil` when none is left.
    func popAlternativeSource() -> Source? {
        state.withLock { state in
            guard var sources = state.options.alternativeSources, !sources.isEmpty else { return nil }
            let next = sources.removeFirst()
            state.options.alternativeSources = sources
            return next
        }
    }

    /// Returns the Low Data Mode source (``AlcedoOptionsInfoItem/lowDataMode(_:)``) and clears it,
    /// so that it is handed out once; `nil` when there is none or it was already taken.
    func takeLowDataModeSource() -> Source? {
        state.withLock { state in
            let source = state.options.lowDataModeSource
            state.options.lowDataModeSource = nil
            return source
        }
    }

    /// Records that `source` failed with `error`.
    /// - Returns: every failure recorded so far, this one last.
    @discardableResult
    func appendError(_ error: AlcedoError, to source: Source) -> [PropagationError] {
        let failure = PropagationError(source: source, error: error)
        return state.withLock { state in
            state.failures.append(failure)
            return state.failures
        }
    }
}

extension RetrievingContext where SourceType == Source {
    /// What follows the failure of `source` with `error`: the source to try next, or the error
    /// the retrieval ends with.
    ///
    /// A refusal for Low Data Mode is tried again with the Low Data Mode source; any other
    /// failure is recorded and the next alternative source is tried. With none left, the
    /// retrieval ends with `error` itself when no alternative was tried, else with
    /// ``ImageSettingErrorReason/alternativeSourcesExhausted(_:)`` listing every failure.
    func nextSource(afterFailureOf source: Source, with error: AlcedoError) -> Result<Source, AlcedoError> {
        if error.isLowDataModeConstrained {
            guard let lowData = takeLowDataModeSource() else { return .failure(error) }
            return .success(lowData)
        }
        if let next = popAlternativeSource() {
            appendError(error, to: source)
            return .success(next)
        }
        if propagationErrors.isEmpty { return .failure(error) }
        return .failure(.imageSettingError(reason: .alternativeSourcesExhausted(appendError(error, to: source))))
    }
}

extension AlcedoError {
    /// `true` when the system's Low Data Mode refused the request on a constrained network, which
    /// the manager answers with the ``AlcedoOptionsInfoItem/lowDataMode(_:)`` source. Linux has
    /// no Low Data Mode, and no Alcedo download is refused for it: always `false` there.
    var isLowDataModeConstrained: Bool { false }
}
