import Foundation

/// Where the time of one image load went, like Nuke's task metrics: how
/// long the bytes took to load, to decode and to process, and how long the
/// load waited (for a free slot, or for shared work it joined).
///
/// Identical requests share their work, so a request that joined a load in
/// flight reports the durations of that shared work. A memory-cache hit has
/// no stage durations.
public struct ImageTaskMetrics: Sendable, Hashable {
    /// From the start of the request to its response.
    public var totalDuration: TimeInterval
    /// Reading the disk cache or loading from the network or a file.
    public var loadingDuration: TimeInterval?
    /// Decoding the bytes.
    public var decodingDuration: TimeInterval?
    /// Running the processors, all of them.
    public var processingDuration: TimeInterval?
    /// The size of the encoded bytes, when they were read for this response.
    public var byteCount: Int?

    /// Creates metrics.
    public init(totalDuration: TimeInterval = 0, loadingDuration: TimeInterval? = nil, decodingDuration: TimeInterval? = nil,
                processingDuration: TimeInterval? = nil, byteCount: Int? = nil) {
        self.totalDuration = totalDuration
        self.loadingDuration = loadingDuration
        self.decodingDuration = decodingDuration
        self.processingDuration = processingDuration
        self.byteCount = byteCount
    }

    /// The time spent neither loading, decoding nor processing: waiting for
    /// a slot of a stage, or for the shared work this request joined.
    public var waitingDuration: TimeInterval {
        max(0, totalDuration - (loadingDuration ?? 0) - (decodingDuration ?? 0) - (processingDuration ?? 0))
    }
}

/// A monotonic clock for durations (unaffected by changes of the wall clock).
enum Stopwatch {
    /// Nanoseconds since an arbitrary point.
    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Seconds from `start` to now.
    static func seconds(since start: UInt64) -> TimeInterval {
        Double(now() &- start) / 1e9
    }
}
