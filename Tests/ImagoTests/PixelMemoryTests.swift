import Foundation
@testable import Imago
import Testing

/// Pixel buffers: what the initializer writes is what the array holds, and
/// on Linux a big buffer's memory is marked for transparent huge pages.
@Suite struct PixelMemoryTests {
    @Test(arguments: [100, PixelMemory.hugePageThreshold - 1, PixelMemory.hugePageThreshold + 12_345])
    func holdsWhatTheInitializerWrote(capacity: Int) {
        let pixels = [UInt8](pixelCapacity: capacity) { buffer, count in
            for index in stride(from: 0, to: capacity - 1, by: 4093) { buffer[index] = UInt8(truncatingIfNeeded: index / 4093 &+ 1) }
            count = capacity - 1   // a shorter count is kept, as with the standard initializer
        }
        #expect(pixels.count == capacity - 1)
        for index in stride(from: 0, to: capacity - 1, by: 4093) {
            #expect(pixels[index] == UInt8(truncatingIfNeeded: index / 4093 &+ 1))
        }
    }

    @Test func aThrowingInitializerLeavesNothingBehind() {
        struct Failure: Error {}
        #expect(throws: Failure.self) {
            _ = try [UInt8](pixelCapacity: PixelMemory.hugePageThreshold) { _, count in
                count = 0
                throw Failure()
            }
        }
    }

    #if os(Linux)
    /// The kernel lists `hg` among the flags of a mapping marked
    /// `MADV_HUGEPAGE`; it does so whether or not it has huge pages free, so
    /// this holds on any kernel built with transparent huge pages.
    @Test func onlyABigBufferIsMarkedForHugePages() throws {
        try #require(
            FileManager.default.fileExists(atPath: "/sys/kernel/mm/transparent_hugepage/enabled"),
            "this kernel has no transparent huge pages; the advice is a no-op there"
        )
        try #require(PixelMemory.usesHugePages, "IMAGO_HUGE_PAGES=0 is set")
        let big = 40 << 20
        let bigFlags = [UInt8](pixelCapacity: big) { buffer, count in
            buffer.initialize(repeating: 7)
            count = big
        }.withUnsafeBytes { flagsOfMapping(containing: $0.baseAddress! + big / 2) }
        #expect(bigFlags?.contains("hg") == true, "flags: \(bigFlags.map { $0.joined(separator: " ") } ?? "no mapping")")

        // Smaller buffers are left to malloc's heap, where a mark would outlive them.
        let small = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: PixelMemory.hugePageThreshold - 1)
        defer { small.deallocate() }
        #expect(!PixelMemory.adviseHugePages(small))
    }

    /// The `VmFlags` of the mapping in `/proc/self/smaps` that holds `address`.
    private func flagsOfMapping(containing address: UnsafeRawPointer) -> [Substring]? {
        // Read to the end: a one-shot read of a /proc file stops after a page.
        guard let data = try? FileHandle(forReadingAtPath: "/proc/self/smaps")?.readToEnd() else { return nil }
        let smaps = String(decoding: data, as: UTF8.self)
        let target = UInt(bitPattern: address)
        var inside = false
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if let range = fields.first, range.contains("-"), !range.hasSuffix(":") {
                let bounds = range.split(separator: "-").compactMap { UInt($0, radix: 16) }
                inside = bounds.count == 2 && bounds[0] <= target && target < bounds[1]
            } else if inside, fields.first == "VmFlags:" {
                return Array(fields.dropFirst())
            }
        }
        return nil
    }
    #endif
}
