/// A flag that exactly one caller can claim.
final class OnceFlag: Sendable {
    // `Locked`, not `Synchronization.Atomic`: Atomic needs macOS 15 / iOS 18.
    private let claimed = Locked(false)

    /// Returns `true` for the first caller only.
    func claim() -> Bool {
        claimed.withLock { claimed in
            defer { claimed = true }
            return !claimed
        }
    }
}
