import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The one place the pipeline writes the disk cache: bytes stored per
/// their HTTP headers, entries refreshed by a 304, and bytes dropped when
/// they do not decode. Local files are never written.
struct DataCacheWriter: Sendable {
    let cache: (any DataCaching)?
    let now: @Sendable () -> Date

    /// Stores the body of a 2xx response for as long as its headers allow,
    /// or removes the old entry when they forbid storing (`no-store`).
    func store(_ data: Data, from response: HTTPURLResponse, for request: IdentifiedRequest) {
        guard let cache, request.usesDataCache else { return }
        if let entry = HTTPCachePolicy.entry(for: response, data: data, now: now()) {
            cache.store(entry, for: request.diskKey)
        } else {
            cache.removeEntry(for: request.diskKey)
        }
    }

    /// Stores `entry` with the freshness and validators of the 304 that
    /// confirmed it, and returns it so refreshed (`nil` when the 304 forbids storing).
    @discardableResult
    func refresh(_ entry: DataCacheEntry, with response: HTTPURLResponse, for request: IdentifiedRequest) -> DataCacheEntry? {
        guard let refreshed = HTTPCachePolicy.refreshed(entry, with: response, now: now()) else { return nil }
        if let cache, request.usesDataCache { cache.store(refreshed, for: request.diskKey) }
        return refreshed
    }

    /// Removes bytes that did not decode (corrupt, or a decompression bomb
    /// over the limits), so they are not kept to fail again.
    func removeUndecodable(for request: IdentifiedRequest) {
        guard let cache, request.usesDataCache else { return }
        cache.removeEntry(for: request.diskKey)
    }
}
