import Dispatch

/// Admission by weight within a capacity, one gate per key, first come
/// first served, with a bounded wait: the server's download slots per
/// host (weight 1) and its memory budget (weight: the bytes a render will
/// hold) are both gates.
///
/// A caller is let in when its weight fits beside what the key's holders
/// hold, or when nobody holds the key (so a weight larger than the whole
/// capacity still runs, alone), and nobody is waiting before it. A wait
/// ends at the caller's deadline, with the caller's error, or when its task
/// is cancelled. ``WorkQueue`` is the other limit of the package: slots of
/// one size, by priority, waiting as long as it takes.
package final class CapacityGates<Key: Hashable & Sendable>: Sendable {
    /// What each key admits at once.
    package let capacity: Int

    private struct Waiter {
        let id: UInt64
        let weight: Int
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct Gate {
        var used = 0
        var holders = 0
        var waiting: [Waiter] = []

        func admits(_ weight: Int, capacity: Int) -> Bool { holders == 0 || used + weight <= capacity }

        mutating func take(_ weight: Int) {
            used += weight
            holders += 1
        }
    }

    private struct State {
        var gates: [Key: Gate] = [:]
        var nextID: UInt64 = 0
        /// Waiters that timed out or were cancelled before they were in line, with their error.
        var gone: [UInt64: any Error] = [:]
        /// The most weight held at once, over all keys.
        var peak = 0
        var total = 0
    }

    private let state = Locked(State())

    /// Creates gates that each admit `capacity` (at least 1).
    package init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// The weight held now and the most held at once, over all keys.
    package var usage: (used: Int, peak: Int) { state.withLock { ($0.total, $0.peak) } }

    /// How many callers wait at `key`.
    package func waitingCount(at key: Key) -> Int { state.withLock { $0.gates[key]?.waiting.count ?? 0 } }

    /// Waits until `weight` is let in at `key`: at once when it fits, else
    /// in arrival order, for at most `seconds` (none: as long as it takes).
    /// Every successful call needs one ``leave(_:weight:)``.
    ///
    /// - Throws: `expired()` when the wait passes `seconds`;
    ///   `CancellationError` when the calling task is cancelled while it waits.
    package func enter(_ key: Key, weight: Int = 1, waitingAtMost seconds: Double?,
                       orThrow expired: @escaping @Sendable () -> any Error) async throws {
        if tryEnter(key, weight: weight) { return }
        let capacity = self.capacity
        let id: UInt64 = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        let timer = seconds.map { seconds in
            Task { [self] in
                try? await Task.sleep(for: .seconds(max(0, seconds)))
                guard !Task.isCancelled else { return }
                fail(id, at: key, with: expired())
            }
        }
        defer { timer?.cancel() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Bool, any Error> in
                    if let error = state.gone.removeValue(forKey: id) { return .failure(error) }
                    var gate = state.gates[key, default: Gate()]
                    defer { state.gates[key] = gate }
                    // Let in while this one got ready to wait.
                    if gate.waiting.isEmpty, gate.admits(weight, capacity: capacity) {
                        gate.take(weight)
                        Self.count(weight, in: &state)
                        return .success(true)
                    }
                    gate.waiting.append(Waiter(id: id, weight: weight, continuation: continuation))
                    return .success(false)
                }
                switch outcome {
                case .success(true): continuation.resume()
                case .success(false): break
                case .failure(let error): continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            fail(id, at: key, with: CancellationError())
        }
    }

    /// Lets `weight` in at `key` when it fits now and nobody waits; `false`
    /// (and nothing taken) otherwise. A `true` needs one ``leave(_:weight:)``.
    package func tryEnter(_ key: Key, weight: Int = 1) -> Bool {
        let capacity = self.capacity
        return state.withLock { state in
            var gate = state.gates[key, default: Gate()]
            guard gate.waiting.isEmpty, gate.admits(weight, capacity: capacity) else { return false }
            gate.take(weight)
            state.gates[key] = gate
            Self.count(weight, in: &state)
            return true
        }
    }

    /// Gives `weight` back at `key`, and lets in the waiters that now fit, in order.
    package func leave(_ key: Key, weight: Int = 1) {
        let capacity = self.capacity
        let admitted: [Waiter] = state.withLock { state in
            guard var gate = state.gates[key] else { return [] }
            gate.used -= weight
            gate.holders -= 1
            state.total -= weight
            let admitted = Self.admitWaiting(&gate, capacity: capacity, in: &state)
            state.gates[key] = gate.holders == 0 && gate.waiting.isEmpty ? nil : gate
            return admitted
        }
        for waiter in admitted { waiter.continuation.resume() }
    }

    /// Takes the waiters at the head of `gate` that fit, in order.
    private static func admitWaiting(_ gate: inout Gate, capacity: Int, in state: inout State) -> [Waiter] {
        var admitted: [Waiter] = []
        while let first = gate.waiting.first, gate.admits(first.weight, capacity: capacity) {
            gate.waiting.removeFirst()
            gate.take(first.weight)
            count(first.weight, in: &state)
            admitted.append(first)
        }
        return admitted
    }

    private static func count(_ weight: Int, in state: inout State) {
        state.total += weight
        state.peak = max(state.peak, state.total)
    }

    /// Removes waiter `id`, if it is waiting, and fails it with `error`; one
    /// not yet in line finds the error when it gets there.
    /// The waiters behind it that now fit (it was in their way) are let in.
    private func fail(_ id: UInt64, at key: Key, with error: any Error) {
        let capacity = self.capacity
        let (failed, admitted): (Waiter?, [Waiter]) = state.withLock { state in
            guard var gate = state.gates[key], let index = gate.waiting.firstIndex(where: { $0.id == id }) else {
                state.gone[id] = error
                // Marks of waiters already let in are never read: bounded, not kept.
                if state.gone.count > 4096 { state.gone.removeAll() }
                return (nil, [])
            }
            let waiter = gate.waiting.remove(at: index)
            let admitted = Self.admitWaiting(&gate, capacity: capacity, in: &state)
            state.gates[key] = gate.holders == 0 && gate.waiting.isEmpty ? nil : gate
            return (waiter, admitted)
        }
        failed?.continuation.resume(throwing: error)
        for waiter in admitted { waiter.continuation.resume() }
    }
}
