#if Server
import CImagoSystem
import Foundation
import Imago

/// The bytes renders may hold at once: each render takes what it will
/// allocate (``RenderCost``) before it decodes and gives it back when it
/// has encoded, so concurrent large renders wait for each other instead of
/// growing the process. A render larger than the whole budget runs alone.
/// Waiting ends at the render's deadline.
///
/// After a large render the allocator's free memory is handed back to the
/// system (`malloc_trim` with glibc), so a peak does not stay resident.
final class MemoryBudget: Sendable {
    /// The budget in bytes.
    let limit: Int
    /// Renders at least this large trim the allocator when they end.
    static let trimThreshold = 64 << 20

    private struct Waiter {
        let id: UInt64
        let bytes: Int
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var used = 0
        var running = 0
        var waiting: [Waiter] = []
        var nextID: UInt64 = 0
        var gone: Set<UInt64> = []
        var peak = 0
    }

    private let state = Locked(State())

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Bytes held now, and the most held at once.
    var usage: (used: Int, peak: Int) { state.withLock { ($0.used, $0.peak) } }

    /// Runs `work` holding `bytes` of the budget.
    ///
    /// - Throws: ``WorkDeadlineExceeded`` when the current deadline passes
    ///   while waiting; what `work` throws.
    func withReservation<T: Sendable>(of bytes: Int, _ work: () async throws -> T) async throws -> T {
        try await acquire(bytes)
        defer { release(bytes) }
        return try await work()
    }

    private func admits(_ bytes: Int, _ state: State) -> Bool {
        state.running == 0 || state.used + bytes <= limit
    }

    private func acquire(_ bytes: Int) async throws {
        let id: UInt64? = state.withLock { state in
            if state.waiting.isEmpty, admits(bytes, state) {
                take(bytes, &state)
                return nil
            }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return }
        let deadline = WorkDeadline.current
        let timer = deadline.map { deadline in
            Task { [self] in
                try? await Task.sleep(for: .seconds(deadline.secondsLeft))
                guard !Task.isCancelled else { return }
                leave(id, with: WorkDeadlineExceeded(deadline: deadline))
            }
        }
        defer { timer?.cancel() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Bool? = state.withLock { state in
                    if state.gone.remove(id) != nil { return nil }
                    if state.waiting.isEmpty, admits(bytes, state) {
                        take(bytes, &state)
                        return true
                    }
                    state.waiting.append(Waiter(id: id, bytes: bytes, continuation: continuation))
                    return false
                }
                switch outcome {
                case true?: continuation.resume()
                case false?: break
                case nil: continuation.resume(throwing: deadline.map { WorkDeadlineExceeded(deadline: $0) } ?? CancellationError())
                }
            }
        } onCancel: {
            leave(id, with: CancellationError())
        }
    }

    private func take(_ bytes: Int, _ state: inout State) {
        state.used += bytes
        state.running += 1
        state.peak = max(state.peak, state.used)
    }

    private func release(_ bytes: Int) {
        let admitted: [Waiter] = state.withLock { state in
            state.used -= bytes
            state.running -= 1
            // In arrival order, as many as now fit (the first always, when nothing runs).
            var admitted: [Waiter] = []
            while let first = state.waiting.first, admits(first.bytes, state) {
                state.waiting.removeFirst()
                take(first.bytes, &state)
                admitted.append(first)
            }
            return admitted
        }
        for waiter in admitted { waiter.continuation.resume() }
        if bytes >= Self.trimThreshold { Self.trimAllocator() }
    }

    private func leave(_ id: UInt64, with error: any Error) {
        let waiter: Waiter? = state.withLock { state in
            guard let index = state.waiting.firstIndex(where: { $0.id == id }) else {
                state.gone.insert(id)
                if state.gone.count > 4096 { state.gone.removeAll() }
                return nil
            }
            return state.waiting.remove(at: index)
        }
        waiter?.continuation.resume(throwing: error)
    }

    /// Returns the allocator's free memory to the system.
    static func trimAllocator() {
        _ = imago_trim_allocator()
    }

    /// A default budget: half the machine's memory, at most 8 GB, at least 512 MB.
    static var defaultLimit: Int {
        let physical = Int(clamping: ProcessInfo.processInfo.physicalMemory)
        return min(8 << 30, max(512 << 20, physical / 2))
    }
}

/// What a render will allocate, from the sizes it will work at: the
/// source's bytes, the decoded canvas (every frame or tile the decoder
/// holds at once), the processing intermediates, and the encoder's working
/// set for the output format at the output size.
struct RenderCost {
    /// Bytes a decoder holds per pixel of its output (RGBA and a working copy).
    static let decodedBytesPerPixel = 8
    /// Bytes the processing holds per output pixel (the resampled image,
    /// a canvas, a blur's passes).
    static let processedBytesPerPixel = 12

    /// Each encoder's working set per output pixel, on top of
    /// ``processedBytesPerPixel``: what a whole render of a `rs:force` to
    /// 2048x2048 and 4096x4096 held at its peak, per output pixel, less the
    /// processing's share, rounded up (`Benchmarks/memory-budget.md`:
    /// JPEG XL 47, AVIF 29, PNG 9, JPEG 8, WebP 7 bytes a pixel in all).
    static func encoderBytesPerPixel(_ format: ImageFormat?) -> Int {
        switch format {
        case .jxl?: 40
        case .avif?, .heic?: 24
        default: 4
        }
    }

    /// The estimate, in bytes.
    static func estimate(sourceBytes: Int, decodedPixels: Int, outputPixels: Int, format: ImageFormat?) -> Int {
        let decoded = decodedPixels.multipliedReportingOverflow(by: decodedBytesPerPixel)
        let processed = outputPixels.multipliedReportingOverflow(by: processedBytesPerPixel + encoderBytesPerPixel(format))
        guard !decoded.overflow, !processed.overflow else { return .max / 4 }
        return sourceBytes + decoded.partialValue + processed.partialValue
    }
}
#endif
