import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension ImagePipeline {
    /// The data stage: the disk cache (fresh, or revalidated), else the loader
    /// with validation; successful HTTP responses are stored per their headers.
    func loadData(_ request: ImageRequest, job: SharedJob<Loaded>) async throws -> Loaded {
        let url = request.url
        let isFile = url?.isFileURL ?? false
        let cache = isFile ? nil : configuration.dataCache
        let key = request.dataKey
        var cached: DataCacheEntry?
        if request.cachePolicy != .reloadIgnoringCaches, let cache {
            cached = cache.entry(for: key)
        }
        if let entry = cached {
            if request.cachePolicy == .onlyCached || entry.isFresh(at: configuration.now()) {
                return Loaded(data: entry.data, source: .disk)
            }
        }
        if request.cachePolicy == .onlyCached {
            throw ImagePipelineError(.notCached, url: url)
        }
        var urlRequest = request.urlRequest
        let revalidating = cached.flatMap { $0.canRevalidate ? $0 : nil }
        if let revalidating { urlRequest = HTTPCachePolicy.conditionalRequest(urlRequest, for: revalidating) }

        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await configuration.dataLoader.data(for: urlRequest, progress: job.report)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw ImagePipelineError(.dataLoadingFailed, url: url, underlying: error)
        }
        let http = response as? HTTPURLResponse
        if let revalidating, let http, http.statusCode == 304 {
            if let cache, let refreshed = HTTPCachePolicy.refreshed(revalidating, with: http, now: configuration.now()) {
                cache.store(refreshed, for: key)
            }
            return Loaded(data: revalidating.data, source: .disk)
        }
        do {
            _ = try CheckedResponse(response, for: url, accepting: configuration.acceptedContentTypes)
        } catch {
            throw ImagePipelineError(.responseRejected, url: url, underlying: error)
        }
        if let cache, let http {
            if let entry = HTTPCachePolicy.entry(for: http, data: data, now: configuration.now()) {
                cache.store(entry, for: key)
            } else {
                cache.removeEntry(for: key)
            }
        }
        return Loaded(data: data, source: isFile ? .file : .network)
    }
}
