import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The bytes of a request and where they came from.
struct FetchedData: Sendable {
    let data: Data
    let source: ImageResponse.Source
    /// What the source's response said about caching (from the disk
    /// cache's entry when the bytes came from there).
    var cacheHeaders = SourceCacheHeaders()
    /// How long reading the disk cache or loading took.
    var duration: TimeInterval = 0
}

/// The data stage: the bytes for a request, shared by every request with
/// the same ``DataIdentity`` (the same URL and credentials, or image ID, and
/// the same cache policy).
///
/// In order: the disk cache (a fresh entry, or any entry under
/// ``ImageRequest/CachePolicy/onlyCached``); else the loader, with a
/// conditional request when a stale entry has validators, where a 304
/// reuses the entry; then the response checks (content type, status).
/// Reads the disk cache; writes it only through ``DataCacheWriter``.
struct DataStage: Sendable {
    let runner: StageRunner<DataIdentity, FetchedData>
    let loader: any DataLoading
    let dataCache: (any DataCaching)?
    let cacheWriter: DataCacheWriter
    let acceptedContentTypes: AcceptedContentTypes
    /// Where disk-cache reads run.
    let workQueue: any Dispatching
    let now: @Sendable () -> Date

    /// The bytes for `request`; joins a load of the same identity in flight.
    ///
    /// - Throws: ``ImagePipelineError`` (``ImagePipelineError/Code/dataLoadingFailed``,
    ///   ``ImagePipelineError/Code/responseRejected``, ``ImagePipelineError/Code/notCached``),
    ///   or `CancellationError`.
    func data(for request: IdentifiedRequest, subscription: JobSubscription, onProgress: ProgressHandler? = nil) async throws -> FetchedData {
        try await runner.output(for: request.data, of: request, subscription: subscription, onProgress: onProgress) { progress in
            let started = Stopwatch.now()
            var fetched = try await load(request, progress: progress)
            fetched.duration = Stopwatch.seconds(since: started)
            return fetched
        } failure: { error in
            // What `load` throws itself is final; anything else came from the loader.
            (error as? Failure)?.error ?? ImagePipelineError(.dataLoadingFailed, url: request.request.url, underlying: error)
        }
    }

    /// A failure of the stage's own checks, told apart from the loader's errors.
    private struct Failure: Error {
        let error: ImagePipelineError
    }

    private func load(_ identified: IdentifiedRequest, progress: @escaping ProgressHandler) async throws -> FetchedData {
        let request = identified.request
        let url = request.url
        var cached: DataCacheEntry?
        if identified.usesDataCache, request.cachePolicy != .reloadIgnoringCaches, let dataCache {
            // On the work queue: a load starts on the caller's thread, often
            // the main thread, which must never wait for the disk.
            let key = identified.diskKey
            cached = try await workQueue.perform { dataCache.entry(for: key) }
        }
        if let cached, request.cachePolicy == .onlyCached || cached.isFresh(at: now()) {
            return FetchedData(data: cached.data, source: .disk, cacheHeaders: cached.cacheHeaders)
        }
        if request.cachePolicy == .onlyCached {
            throw Failure(error: ImagePipelineError(.notCached, url: url))
        }
        var urlRequest = request.urlRequest
        let revalidating = cached.flatMap { $0.canRevalidate ? $0 : nil }
        if let revalidating { urlRequest = HTTPCachePolicy.conditionalRequest(urlRequest, for: revalidating) }

        let (data, response) = try await loader.data(for: urlRequest, progress: progress)
        let http = response as? HTTPURLResponse
        if let revalidating, let http, http.statusCode == 304 {
            let refreshed = cacheWriter.refresh(revalidating, with: http, for: identified)
            return FetchedData(data: revalidating.data, source: .disk, cacheHeaders: (refreshed ?? revalidating).cacheHeaders)
        }
        do {
            _ = try CheckedResponse(response, for: url, accepting: acceptedContentTypes,
                                    partialContent: urlRequest.value(forHTTPHeaderField: "Range") != nil)
        } catch {
            throw Failure(error: ImagePipelineError(.responseRejected, url: url, underlying: error))
        }
        if let http { cacheWriter.store(data, from: http, for: identified) }
        return FetchedData(data: data, source: identified.usesDataCache ? .network : .file, cacheHeaders: SourceCacheHeaders(response))
    }
}
