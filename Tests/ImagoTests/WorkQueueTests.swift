import Foundation
@testable import Imago
import Testing

/// The slot queue every pipeline stage and the server's renders wait in:
/// by priority, then oldest job first.
@Suite(.timeLimit(.minutes(1))) struct WorkQueueTests {
    /// Job `id` waiting in `queue` on a task of its own; once it holds a
    /// slot it appends `name` to `order` and keeps the slot: the test gives
    /// slots back itself (`release()`), one at a time.
    private func waiting(
        _ queue: WorkQueue, id: UInt64, priority: ImageRequest.Priority = .normal, name: String, order: Locked<[String]>
    ) async throws -> Task<Void, any Error> {
        let before = queue.waitingCount
        let task = Task {
            try await queue.acquire(id: id, priority: priority)
            order.withLock { $0.append(name) }
        }
        try await eventually { queue.waitingCount == before + 1 }
        return task
    }

    /// A queue of one slot, held by a job made before any other of the test's.
    private static func queueWithItsSlotHeld() async throws -> (WorkQueue, Locked<[String]>) {
        let queue = WorkQueue(maximumConcurrency: 1)
        try await queue.acquire(id: WorkQueue.makeID(), priority: .normal)
        return (queue, Locked<[String]>([]))
    }

    /// Gives the held slot to the next waiter and waits until it has it.
    private func handOver(_ queue: WorkQueue, order: Locked<[String]>) async throws {
        let before = order.withLock { $0.count }
        queue.release()
        try await eventually { order.withLock { $0.count } == before + 1 }
    }

    @Test func aJobComingBackForAnotherSlotGoesAheadOfJobsMadeAfterIt() async throws {
        let queue = WorkQueue(maximumConcurrency: 1)
        let (old, younger, youngest) = (WorkQueue.makeID(), WorkQueue.makeID(), WorkQueue.makeID())
        let order = Locked<[String]>([])
        // The old job's first step (a decode) holds the only slot; two younger
        // jobs queue, the youngest first.
        try await queue.acquire(id: old, priority: .normal)
        let youngestWaits = try await waiting(queue, id: youngest, name: "youngest", order: order)
        let youngerWaits = try await waiting(queue, id: younger, name: "younger", order: order)
        // The older of the two goes first, though it queued second.
        try await handOver(queue, order: order)
        #expect(order.withLock { $0 } == ["younger"])
        // The old job's second step (resize and encode) queues behind the youngest
        // job, and goes before it.
        let oldWaitsAgain = try await waiting(queue, id: old, name: "old, again", order: order)
        try await handOver(queue, order: order)
        try await handOver(queue, order: order)
        #expect(order.withLock { $0 } == ["younger", "old, again", "youngest"])
        queue.release()
        for task in [youngestWaits, youngerWaits, oldWaitsAgain] { try await task.value }
        #expect(queue.waitingCount == 0)
    }

    @Test func priorityComesBeforeAge() async throws {
        let (queue, order) = try await Self.queueWithItsSlotHeld()
        let (old, young) = (WorkQueue.makeID(), WorkQueue.makeID())
        let oldWaits = try await waiting(queue, id: old, priority: .normal, name: "old", order: order)
        let youngWaits = try await waiting(queue, id: young, priority: .high, name: "young, high", order: order)
        try await handOver(queue, order: order)
        try await handOver(queue, order: order)
        #expect(order.withLock { $0 } == ["young, high", "old"])
        queue.release()
        for task in [oldWaits, youngWaits] { try await task.value }
    }

    @Test func aWaiterMovedToAnotherPriorityKeepsItsAgeAndIsLetInOnce() async throws {
        let (queue, order) = try await Self.queueWithItsSlotHeld()
        let (old, young) = (WorkQueue.makeID(), WorkQueue.makeID())
        let youngWaits = try await waiting(queue, id: young, priority: .high, name: "young", order: order)
        let oldWaits = try await waiting(queue, id: old, priority: .low, name: "old", order: order)
        // Raised to the younger job's level, the old job goes first by age.
        queue.update(id: old, priority: .high)
        try await handOver(queue, order: order)
        try await handOver(queue, order: order)
        #expect(order.withLock { $0 } == ["old", "young"])
        for task in [youngWaits, oldWaits] { try await task.value }
        // The entry it left at the low level does not let it in again: back
        // at that level for a second step, it waits like any job, once.
        let oldWaitsAgain = try await waiting(queue, id: old, priority: .low, name: "old, again", order: order)
        let newWaits = try await waiting(queue, id: WorkQueue.makeID(), priority: .low, name: "new", order: order)
        try await handOver(queue, order: order)
        try await handOver(queue, order: order)
        #expect(order.withLock { $0 } == ["old", "young", "old, again", "new"])
        queue.release()
        for task in [oldWaitsAgain, newWaits] { try await task.value }
        #expect(queue.waitingCount == 0)
        #expect(try await queue.withSlot { true }, "every slot was given back")
    }
}
