import Synchronization

/// A flag that exactly one caller can claim.
final class OnceFlag: Sendable {
    private let claimed = Atomic<Bool>(false)

    /// Returns `true` for the first caller only.
    func claim() -> Bool {
        !claimed.exchange(true, ordering: .acquiringAndReleasing)
    }
}
