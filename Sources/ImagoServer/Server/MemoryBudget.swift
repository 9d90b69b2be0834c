#if Server
import CImagoSystem
import Foundation
import Imago

/// The bytes renders may hold at once: each render takes what it will
/// allocate (``RenderCost``) before it decodes and gives it back when it
/// has encoded, so concurrent large renders wait for each other instead of
/// growing the process. A render larger than the whole budget runs alone.
///
/// A quarter of the budget, apart, bounds the downloaded sources that
/// renders hold while they wait for a worker: a render whose source does
/// not fit beside the others is refused as saturated (503) instead of
/// waiting, since a wait would go on holding the bytes. What sources hold
/// is then at most this share, plus the downloads under way (each within
/// the source size limit, as many as the download slots), plus one source
/// larger than the share when nobody holds any. The two shares are
/// separate gates: a render never waits for a source.
///
/// Waiting ends at the render's deadline. After a large render the
/// allocator's free memory is handed back to the system (`malloc_trim`
/// with glibc; a preloaded jemalloc's or tcmalloc's own purge), so a peak
/// does not stay resident.
struct MemoryBudget: Sendable {
    /// Renders at least this large trim the allocator when they end.
    static let trimThreshold = 64 << 20
    private let renders: CapacityGates<Int>
    private let sources: CapacityGates<Int>

    /// A budget of `limit` bytes for renders, and a quarter of it for the sources they hold.
    init(limit: Int) {
        renders = CapacityGates(capacity: limit)
        sources = CapacityGates(capacity: limit / 4)
    }

    /// Runs `work` holding `bytes` of the budget.
    ///
    /// - Throws: ``WorkDeadlineExceeded`` when the current deadline passes
    ///   while waiting; what `work` throws.
    func withReservation<T: Sendable>(of bytes: Int, _ work: () async throws -> T) async throws -> T {
        try await Self.enter(renders, weight: bytes)
        defer {
            renders.leave(0, weight: bytes)
            if bytes >= Self.trimThreshold { _ = imago_trim_allocator() }
        }
        return try await work()
    }

    /// Runs `work` holding `bytes` of the sources' share, when they fit
    /// now (or nobody holds any); `nil` without running it when they do not.
    /// It does not wait: the bytes are already in memory, and a wait would
    /// hold them.
    func withSource<T: Sendable>(of bytes: Int, _ work: () async throws -> T) async throws -> T? {
        guard sources.tryEnter(0, weight: bytes) else { return nil }
        defer { sources.leave(0, weight: bytes) }
        return try await work()
    }

    private static func enter(_ gates: CapacityGates<Int>, weight: Int) async throws {
        let deadline = WorkDeadline.current
        try await gates.enter(0, weight: weight, waitingAtMost: deadline?.secondsLeft) {
            WorkDeadlineExceeded(deadline: deadline ?? WorkDeadline(uptimeNanoseconds: 0))
        }
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
    /// Bytes a decoder holds per pixel of its output: RGBA and a working
    /// copy; AVIF and HEIC also hold their YUV planes and, for a grid, every
    /// tile's (a 41 MP grid of 256 tiles grew the server by 12.6 bytes a
    /// pixel, `Benchmarks/grid-memory.md`).
    static func decodedBytesPerPixel(_ source: ImageFormat?) -> Int {
        switch source {
        case .avif?, .heic?: 14
        default: 8
        }
    }
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
    static func estimate(sourceBytes: Int, sourceFormat: ImageFormat?, decodedPixels: Int, outputPixels: Int, format: ImageFormat?) -> Int {
        let decoded = decodedPixels.multipliedReportingOverflow(by: decodedBytesPerPixel(sourceFormat))
        let processed = outputPixels.multipliedReportingOverflow(by: processedBytesPerPixel + encoderBytesPerPixel(format))
        guard !decoded.overflow, !processed.overflow else { return .max / 4 }
        return sourceBytes + decoded.partialValue + processed.partialValue
    }
}
#endif
