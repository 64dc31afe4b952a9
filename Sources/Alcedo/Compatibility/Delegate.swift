import Synchronization

/// Kingfisher's `Delegate<Input, Output>`: a closure slot that holds its owner weakly, so that
/// setting a callback on an object the callback's owner keeps does not make a cycle.
///
/// ```swift
/// let onResponse = Delegate<URLResponse, URLSession.ResponseDisposition>()
/// onResponse.delegate(on: self) { (self, response) in self.decide(response) }
/// let disposition = onResponse.call(response) ?? .allow
/// ```
///
/// The slot is empty at first (``call(_:)`` returns `nil`), and becomes empty again when the
/// object given to `delegate(on:block:)` is deallocated. Setting and reading the slot is safe
/// from any thread; the closures are called on the caller's thread, as Kingfisher's are, so
/// they must be safe to call from wherever ``call(_:)`` is.
public final class Delegate<Input, Output>: @unchecked Sendable {
    // `@unchecked`: the two closures are only read and written under `lock`.
    private let lock = Mutex(())
    private var syncBlock: ((Input) -> Output?)?
    private var asyncBlock: ((Input) async -> Output?)?

    /// Creates an empty slot.
    public init() {}

    /// Sets the closure ``call(_:)`` runs: `block` with `target` (held weakly) and the input;
    /// `nil` empties the slot. Replaces the closure set before.
    public func delegate<T: AnyObject>(on target: T, block: ((T, Input) -> Output)?) {
        let wrapped: ((Input) -> Output?)? = block.map { block in
            { [weak target] input in
                guard let target else { return nil }
                return block(target, input)
            }
        }
        lock.withLock { _ in syncBlock = wrapped }
    }

    /// Sets the closure ``callAsync(_:)`` runs: `block` with `target` (held weakly) and the input;
    /// `nil` empties the slot. Replaces the asynchronous closure set before.
    public func delegate<T: AnyObject>(on target: T, block: ((T, Input) async -> Output)?) {
        let wrapped: ((Input) async -> Output?)? = block.map { block in
            { [weak target] input in
                guard let target else { return nil }
                return await block(target, input)
            }
        }
        lock.withLock { _ in asyncBlock = wrapped }
    }

    /// Runs the closure set with `delegate(on:block:)`; `nil` when none is set or its target is gone.
    public func call(_ input: Input) -> Output? {
        let block = lock.withLock { _ in syncBlock }
        return block?(input)
    }

    /// ``call(_:)``.
    public func callAsFunction(_ input: Input) -> Output? {
        call(input)
    }

    /// Runs the asynchronous closure set with `delegate(on:block:)`; `nil` when none is set or
    /// its target is gone.
    public func callAsync(_ input: Input) async -> Output? {
        let block = lock.withLock { _ in asyncBlock }
        return await block?(input)
    }

    /// `true` when a closure (either form) is set.
    public var isSet: Bool {
        lock.withLock { _ in syncBlock != nil || asyncBlock != nil }
    }
}

extension Delegate where Input == Void {
    /// ``call(_:)`` with no input.
    public func call() -> Output? {
        call(())
    }

    /// ``call(_:)`` with no input.
    public func callAsFunction() -> Output? {
        call()
    }
}
