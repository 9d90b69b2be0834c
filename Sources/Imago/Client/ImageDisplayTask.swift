import Foundation

/// What ``ImageService/setImage(on:from:placeholder:)`` started for a
/// target: await it to know what the target ends up showing, or cancel it.
///
/// ```swift
/// let display = client.setImage(on: cell, from: url, placeholder: .placeholder)
/// if case .failed(let error) = await display.finished() { log(error) }
/// ```
///
/// It finishes exactly once: when the image is shown, when the load fails
/// (the target keeps its placeholder), or when it is cancelled (by
/// ``cancel()`` or by a later `setImage` on the same target, which never lets
/// this one's image appear). An image already in memory, and a `nil` URL,
/// finish it before `setImage` returns.
public final class ImageDisplayTask: Cancellable {
    /// How a display ended.
    public enum Outcome: Sendable, CustomStringConvertible {
        /// The target shows this image.
        case displayed(Image)
        /// There was no URL: the target shows the placeholder (nothing when it is `nil`).
        case noURL
        /// The load failed; the target keeps the placeholder.
        case failed(any Error)
        /// Cancelled, or replaced by a later `setImage` on the same target,
        /// before the image was shown; the target keeps what it had.
        case cancelled

        /// The image shown, for ``displayed(_:)``.
        public var image: Image? {
            if case .displayed(let image) = self { return image }
            return nil
        }

        /// Whether the display was cancelled (or replaced) before it showed its image.
        public var isCancelled: Bool {
            if case .cancelled = self { return true }
            return false
        }

        /// The error, for ``failed(_:)``.
        public var error: (any Error)? {
            if case .failed(let error) = self { return error }
            return nil
        }

        public var description: String {
            switch self {
            case .displayed(let image): "displayed(\(image.width)x\(image.height))"
            case .noURL: "noURL"
            case .failed(let error): "failed(\(error))"
            case .cancelled: "cancelled"
            }
        }
    }

    private struct State {
        var outcome: Outcome?
        var waiters: [CheckedContinuation<Outcome, Never>] = []
        var load: (any Cancellable)?
    }

    /// The URL being shown; `nil` when the target was cleared.
    public let url: URL?
    private let state = Locked(State())
    private let onCancel: @Sendable () -> Void

    /// Creates an unfinished display, for implementations of ``ImageService``
    /// (``ImageClient`` and test doubles).
    ///
    /// - Parameters:
    ///   - url: The URL being shown.
    ///   - onCancel: Called once, on the first ``cancel()`` before the task finishes.
    public init(url: URL?, onCancel: @escaping @Sendable () -> Void = {}) {
        self.url = url
        self.onCancel = onCancel
    }

    /// Creates a display that has already ended with `outcome`.
    public convenience init(url: URL?, finished outcome: Outcome) {
        self.init(url: url)
        finish(outcome)
    }

    /// How the display ended, or `nil` while it is loading.
    public var outcome: Outcome? { state.withLock { $0.outcome } }

    /// Whether the display has ended.
    public var isFinished: Bool { outcome != nil }

    /// Waits until the display ends and returns how.
    ///
    /// Cancelling the waiting task does not cancel the display; call
    /// ``cancel()`` for that.
    @discardableResult
    public func finished() async -> Outcome {
        await withCheckedContinuation { continuation in
            let outcome = state.withLock { state -> Outcome? in
                if let outcome = state.outcome { return outcome }
                state.waiters.append(continuation)
                return nil
            }
            if let outcome { continuation.resume(returning: outcome) }
        }
    }

    /// Ends the display with `outcome`; returns `false`, and changes nothing,
    /// when it had already ended. For implementations of ``ImageService``.
    @discardableResult
    public func finish(_ outcome: Outcome) -> Bool {
        let waiters = state.withLock { state -> [CheckedContinuation<Outcome, Never>]? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            state.load = nil
            defer { state.waiters = [] }
            return state.waiters
        }
        guard let waiters else { return false }
        for waiter in waiters { waiter.resume(returning: outcome) }
        return true
    }

    /// Stops the load and ends the display as ``Outcome/cancelled``, unless
    /// it already ended. The target keeps what it shows.
    public func cancel() {
        let load = state.withLock { state -> (any Cancellable)?? in
            guard state.outcome == nil else { return nil }
            return .some(state.load)
        }
        guard let load else { return }
        guard finish(.cancelled) else { return }
        onCancel()
        load?.cancel()
    }

    /// Hands over the load to cancel with the display; when the display
    /// already ended, the load is cancelled at once unless it finished it.
    func attach(_ load: any Cancellable) {
        let ended = state.withLock { state -> Outcome? in
            if state.outcome == nil { state.load = load }
            return state.outcome
        }
        if case .cancelled? = ended { load.cancel() }
    }
}
