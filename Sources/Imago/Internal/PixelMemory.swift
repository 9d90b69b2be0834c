#if canImport(Glibc)
import Glibc
#endif
import Foundation

extension Array where Element == UInt8 {
    /// A pixel buffer of up to `capacity` bytes that `body` initializes,
    /// exactly as `init(unsafeUninitializedCapacity:initializingWith:)` does,
    /// with one difference on Linux: a big buffer first asks the kernel for
    /// transparent huge pages (see ``PixelMemory``).
    package init(
        pixelCapacity capacity: Int,
        initializingWith body: (inout UnsafeMutableBufferPointer<UInt8>, inout Int) throws -> Void
    ) rethrows {
        try self.init(unsafeUninitializedCapacity: capacity) { buffer, count in
            PixelMemory.adviseHugePages(buffer)
            try body(&buffer, &count)
        }
    }
}

/// Where fresh pixel memory comes from, measured (`Benchmarks/performance.md` §5).
///
/// A 12 MP bitmap is bigger than glibc's largest `mmap` threshold (32 MiB),
/// so every decode of one maps fresh pages: about 8,800 page faults of 4 KiB,
/// each zeroed by the kernel, which made a 12 MP JPEG decode cost 1.5x the
/// same decode into a reused buffer. Before a decoder writes a buffer of at
/// least ``hugePageThreshold`` bytes, Imago marks its 2 MiB-aligned interior
/// `MADV_HUGEPAGE`; the kernel then backs it with 2 MiB pages, 512 times
/// fewer faults, when it has them (Linux with transparent huge pages in
/// `madvise` or `always` mode; elsewhere this does nothing).
///
/// Set the environment variable `IMAGO_HUGE_PAGES=0` to turn the advice off,
/// for example on hosts where huge-page compaction causes latency spikes.
package enum PixelMemory {
    /// Buffers smaller than this get no advice: glibc serves them from its
    /// heap, which recycles pages after the first free.
    package static let hugePageThreshold = 16 << 20

    /// Whether the advice is given (read once from `IMAGO_HUGE_PAGES`).
    package static let usesHugePages: Bool = ProcessInfo.processInfo.environment["IMAGO_HUGE_PAGES"] != "0"

    private static let hugePageSize = 2 << 20

    /// Marks the 2 MiB-aligned part of `buffer` for huge pages, if it is big
    /// enough and the platform has them; returns whether it asked.
    @discardableResult
    static func adviseHugePages(_ buffer: UnsafeMutableBufferPointer<UInt8>) -> Bool {
        #if os(Linux)
        guard usesHugePages, buffer.count >= hugePageThreshold, let base = buffer.baseAddress else { return false }
        let mask = UInt(hugePageSize - 1)
        let start = (UInt(bitPattern: base) + mask) & ~mask
        let end = (UInt(bitPattern: base) + UInt(buffer.count)) & ~mask
        guard end > start, let pointer = UnsafeMutableRawPointer(bitPattern: start) else { return false }
        // Advice only: a kernel without transparent huge pages answers EINVAL,
        // and the buffer works the same either way.
        _ = madvise(pointer, Int(end - start), MADV_HUGEPAGE)
        return true
        #else
        return false
        #endif
    }
}
