import Foundation

/// A caller's place in a shared job: lets it change its priority later.
package final class JobSubscription: Sendable {
    private struct State {
        var priority: ImageRequest.Priority
        var apply: (@Sendable (ImageRequest.Priority) -> Void)?
    }

    private let state: Locked<State>

    package init(priority: ImageRequest.Priority) {
        state = Locked(State(priority: priority))
    }

    package var priority: ImageRequest.Priority { state.withLock { $0.priority } }

    /// Changes the priority; the job re-evaluates its own.
    package func setPriority(_ priority: ImageRequest.Priority) {
        let apply = state.withLock { state in
            state.priority = priority
            return state.apply
        }
        apply?(priority)
    }

    /// Connects the subscription to the job that serves it.
    func attach(_ apply: @escaping @Sendable (ImageRequest.Priority) -> Void) {
        let priority = state.withLock { state in
            state.apply = apply
            return state.priority
        }
        apply(priority)
    }
}
