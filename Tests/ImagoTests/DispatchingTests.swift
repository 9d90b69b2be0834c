import Dispatch
import Imago
import ImagoTesting
import Testing

/// Queues as a dependency: `DispatchQueue`, `ImmediateQueue` and `ManualQueue`
/// behind ``Dispatching``.
@Suite struct DispatchingTests {
    @Test func dispatchQueueRunsTheWorkOnThatQueue() async {
        let key = DispatchSpecificKey<String>()
        let queue = DispatchQueue(label: "imago.tests.dispatching")
        queue.setSpecific(key: key, value: "mine")
        let dispatcher: any Dispatching = queue
        let seen = await withCheckedContinuation { continuation in
            dispatcher.dispatch { continuation.resume(returning: DispatchQueue.getSpecific(key: key)) }
        }
        #expect(seen == "mine")
    }

    @Test func immediateQueueRunsTheWorkBeforeReturning() {
        let ran = Locked(false)
        ImmediateQueue().dispatch { ran.withLock { $0 = true } }
        #expect(ran.withLock { $0 })
    }

    @Test func manualQueueHoldsWorkUntilTheTestRunsIt() {
        let queue = ManualQueue()
        let log = Locked<[Int]>([])
        queue.dispatch { log.withLock { $0.append(1) } }
        queue.dispatch { log.withLock { $0.append(2) } }
        #expect(queue.pendingCount == 2)
        #expect(log.withLock { $0 }.isEmpty)

        #expect(queue.runNext())
        #expect(log.withLock { $0 } == [1])
        #expect(queue.pendingCount == 1)
    }

    @Test func manualQueueRunAllRunsInOrderIncludingWorkAddedWhileRunning() {
        let queue = ManualQueue()
        let log = Locked<[String]>([])
        queue.dispatch {
            log.withLock { $0.append("a") }
            queue.dispatch { log.withLock { $0.append("c") } }
        }
        queue.dispatch { log.withLock { $0.append("b") } }
        #expect(queue.runAll() == 3)
        #expect(log.withLock { $0 } == ["a", "b", "c"])
        #expect(queue.pendingCount == 0)
        #expect(!queue.runNext())
    }
}
