import Foundation
@testable import Imago
import ImagoTesting
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

    // MARK: Work handed to the queue (perform)

    /// Job `id`'s work waiting in `queue` for `dispatcher` on a task of its
    /// own; the work appends `name` to `order` and returns it.
    private func waitingWork(
        _ queue: WorkQueue, id: UInt64, priority: ImageRequest.Priority = .normal, on dispatcher: any Dispatching,
        name: String, order: Locked<[String]>
    ) async throws -> Task<String, any Error> {
        let before = queue.waitingCount
        let task = Task {
            try await queue.perform(id: id, priority: priority, on: dispatcher) {
                order.withLock { $0.append(name) }
                return name
            }
        }
        try await eventually { queue.waitingCount == before + 1 }
        return task
    }

    @Test func waitingWorkIsDispatchedByTheWorkThatGaveTheSlotBackByPriorityThenAge() async throws {
        let queue = WorkQueue(maximumConcurrency: 1)
        let dispatcher = ManualQueue()
        let order = Locked<[String]>([])
        let (first, old, young, high) = (WorkQueue.makeID(), WorkQueue.makeID(), WorkQueue.makeID(), WorkQueue.makeID())
        let firstRuns = Task { try await queue.perform(id: first, priority: .normal, on: dispatcher) { order.withLock { $0.append("first") } } }
        await dispatcher.waitForWork()
        let youngWaits = try await waitingWork(queue, id: young, on: dispatcher, name: "young", order: order)
        let oldWaits = try await waitingWork(queue, id: old, on: dispatcher, name: "old", order: order)
        let highWaits = try await waitingWork(queue, id: high, priority: .high, on: dispatcher, name: "high", order: order)
        #expect(dispatcher.pendingCount == 1, "only the work that holds the slot is dispatched")
        // Other work on the same queue meanwhile: it keeps its place in the queue's line.
        dispatcher.dispatch { order.withLock { $0.append("other") } }
        // Each job's work, as it ends, dispatches the next job's itself: the
        // next is queued the moment it returns, with no task (and no
        // cooperative thread) between.
        let steps: [(ran: String, pending: Int)] = [("first", 2), ("other", 1), ("high", 1), ("old", 1), ("young", 0)]
        for (index, step) in steps.enumerated() {
            #expect(dispatcher.runNext())
            #expect(order.withLock { $0 } == steps[...index].map(\.ran))
            #expect(dispatcher.pendingCount == step.pending, "after \(step.ran)")
        }
        try await firstRuns.value
        #expect(try await [youngWaits.value, oldWaits.value, highWaits.value] == ["young", "old", "high"])
        #expect(try await queue.withSlot { true }, "every slot was given back")
    }

    @Test func waitingWorkForAnotherDispatcherIsDispatchedThereAndATaskWaitingIsResumed() async throws {
        let (queue, order) = try await Self.queueWithItsSlotHeld()
        let (first, second) = (ManualQueue(), ManualQueue())
        let firstWaits = try await waitingWork(queue, id: WorkQueue.makeID(), on: first, name: "first", order: order)
        let secondWaits = try await waitingWork(queue, id: WorkQueue.makeID(), on: second, name: "second", order: order)
        let taskWaits = try await waiting(queue, id: WorkQueue.makeID(), name: "task", order: order)
        queue.release()
        await first.waitForWork()
        #expect(first.runNext())
        // The next work is for the other queue: dispatched there, not run here.
        #expect(order.withLock { $0 } == ["first"] && first.pendingCount == 0)
        await second.waitForWork()
        #expect(second.runNext())
        // After it, a task waiting for a slot goes on holding it.
        try await eventually { order.withLock { $0 } == ["first", "second", "task"] }
        #expect(try await [firstWaits.value, secondWaits.value] == ["first", "second"])
        try await taskWaits.value
        #expect(queue.waitingCount == 0)
        queue.release()
        #expect(try await queue.withSlot { true }, "every slot was given back")
    }

    @Test func workCancelledOrPastItsDeadlineWhileWaitingNeverRunsAndFailingWorkGivesItsSlotBack() async throws {
        let queue = WorkQueue(maximumConcurrency: 1)
        let dispatcher = ManualQueue()
        let order = Locked<[String]>([])
        struct Failed: Error {}
        let failing = Task { try await queue.perform(id: WorkQueue.makeID(), priority: .normal, on: dispatcher) { () throws -> Int in throw Failed() } }
        await dispatcher.waitForWork()
        let cancelled = try await waitingWork(queue, id: WorkQueue.makeID(), on: dispatcher, name: "cancelled", order: order)
        let late = Task {
            try await WorkDeadline.$current.withValue(WorkDeadline(secondsFromNow: 0.05)) {
                try await queue.perform(id: WorkQueue.makeID(), priority: .normal, on: dispatcher) { order.withLock { $0.append("late") } }
            }
        }
        try await eventually { queue.waitingCount == 2 }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(queue.waitingCount == 1)
        try await Task.sleep(nanoseconds: 100_000_000)   // the late job's deadline passes while it waits
        #expect(dispatcher.runNext())
        #expect(dispatcher.runNext())   // the late job's work, dispatched by the failing work's end
        await #expect(throws: Failed.self) { try await failing.value }
        await #expect(throws: WorkDeadlineExceeded.self) { try await late.value }
        #expect(order.withLock { $0 }.isEmpty, "neither the cancelled nor the late work ran")
        // A deadline already passed: no wait, no work.
        await #expect(throws: WorkDeadlineExceeded.self) {
            try await WorkDeadline.$current.withValue(WorkDeadline(secondsFromNow: -1)) {
                try await queue.perform(id: WorkQueue.makeID(), priority: .normal, on: dispatcher) { order.withLock { $0.append("past") } }
            }
        }
        #expect(dispatcher.pendingCount == 0 && order.withLock { $0 }.isEmpty)
        #expect(try await queue.withSlot { true }, "every slot was given back")
    }
}
