import Foundation
@testable import Imago
import Testing

/// The weighted gates behind the server's download slots and memory budget.
@Suite(.timeLimit(.minutes(1))) struct CapacityGatesTests {
    struct Expired: Error {}

    @Test func weightsAreLetInWhileTheyFitAndAWeightLargerThanTheCapacityRunsAlone() async throws {
        let gates = CapacityGates<Int>(capacity: 10)
        #expect(gates.tryEnter(0, weight: 6))
        #expect(!gates.tryEnter(0, weight: 5), "6 + 5 is over 10")
        #expect(gates.tryEnter(0, weight: 4))
        #expect(gates.tryEnter(1, weight: 10), "each key is a gate of its own")
        #expect(gates.usage.used == 20)
        gates.leave(0, weight: 6)
        gates.leave(0, weight: 4)
        #expect(gates.tryEnter(0, weight: 25), "alone, larger than the capacity")
        #expect(!gates.tryEnter(0, weight: 1), "nothing beside it")
        gates.leave(0, weight: 25)
        gates.leave(1, weight: 10)
        #expect(gates.usage.used == 0)
        #expect(gates.usage.peak == 35)
    }

    @Test func waitersAreLetInFirstComeFirstServed() async throws {
        let gates = CapacityGates<Int>(capacity: 10)
        #expect(gates.tryEnter(0, weight: 10))
        let order = Locked<[Int]>([])
        let big = Task {
            try await gates.enter(0, weight: 8, waitingAtMost: nil) { Expired() }
            order.withLock { $0.append(8) }
        }
        try await eventually { gates.waitingCount(at: 0) == 1 }
        // Arrives second: it would fit before the first, but waits behind it.
        let small = Task {
            try await gates.enter(0, weight: 2, waitingAtMost: nil) { Expired() }
            order.withLock { $0.append(2) }
        }
        try await eventually { gates.waitingCount(at: 0) == 2 }
        #expect(!gates.tryEnter(0, weight: 1), "a caller does not pass those waiting")
        gates.leave(0, weight: 10)
        try await big.value
        try await small.value
        #expect(order.withLock { $0 } == [8, 2])
        gates.leave(0, weight: 8)
        gates.leave(0, weight: 2)
        #expect(gates.usage.used == 0)
    }

    @Test func aWaiterThatGivesUpLetsInThoseBehindIt() async throws {
        let gates = CapacityGates<Int>(capacity: 10)
        #expect(gates.tryEnter(0, weight: 6))
        // First in line, too large to fit beside 6.
        let large = Task { try await gates.enter(0, weight: 8, waitingAtMost: nil) { Expired() } }
        try await eventually { gates.waitingCount(at: 0) == 1 }
        // Behind it, one that fits beside 6 but not past it.
        let fits = Task { try await gates.enter(0, weight: 4, waitingAtMost: nil) { Expired() } }
        try await eventually { gates.waitingCount(at: 0) == 2 }
        large.cancel()
        await #expect(throws: CancellationError.self) { try await large.value }
        try await fits.value
        #expect(gates.usage.used == 10)
        gates.leave(0, weight: 4)
        gates.leave(0, weight: 6)
    }

    @Test func aWaitPastItsTimeFailsWithTheCallersError() async throws {
        let gates = CapacityGates<Int>(capacity: 1)
        #expect(gates.tryEnter(0))
        await #expect(throws: Expired.self) { try await gates.enter(0, waitingAtMost: 0.2) { Expired() } }
        #expect(gates.waitingCount(at: 0) == 0)
        gates.leave(0)
        #expect(gates.usage.used == 0)
    }

    @Test func aCancelledWaiterThrowsCancellationAndHoldsNothing() async throws {
        let gates = CapacityGates<Int>(capacity: 1)
        #expect(gates.tryEnter(0))
        let waiting = Task { try await gates.enter(0, waitingAtMost: nil) { Expired() } }
        try await eventually { gates.waitingCount(at: 0) == 1 }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        gates.leave(0)
        #expect(gates.usage.used == 0)
        #expect(gates.tryEnter(0))
        gates.leave(0)
    }
}
