import Foundation
import ServiceLifecycle
import SharedState

/// Whether the server takes new work: `GET /health/ready` answers 503 from
/// the moment a drain starts, so a load balancer stops sending.
final class Readiness: Sendable {
    private let draining = Locked(false)

    /// Whether a drain has started.
    var isDraining: Bool { draining.withLock { $0 } }

    /// Marks the drain as started.
    func startDraining() { draining.withLock { $0 = true } }
}

/// The first service told of a graceful shutdown (SIGTERM or SIGINT): it
/// marks the server not ready, then keeps serving for `delay` so that load
/// balancers see it, before the HTTP server stops accepting and finishes
/// what is in flight.
struct DrainService: Service {
    let readiness: Readiness
    let delay: Duration

    func run() async throws {
        do {
            try await gracefulShutdown()
        } catch {
            return  // cancelled: the group is ending another way
        }
        readiness.startDraining()
        try? await Task.sleep(for: delay)
    }
}
