import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's limit on open file descriptors, which every client
/// connection, source, cache file and store connection takes one of.
enum DescriptorLimit {
    /// Descriptors kept for what is not a client: sources, cache files,
    /// the result store, logs.
    static let reserve = 256

    /// Raises the soft limit to `wanted` (or as far as the hard limit
    /// allows) and returns the limit in force.
    static func raise(toFit wanted: Int) -> Int {
        #if os(Linux)
        let resource = Int32(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return 1024 }
        let target = rlim_t(max(0, wanted))
        if limit.rlim_cur < target {
            var raised = limit
            raised.rlim_cur = min(target, limit.rlim_max)
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        return limit.rlim_cur >= rlim_t(Int.max) ? Int.max : Int(limit.rlim_cur)
    }
}
