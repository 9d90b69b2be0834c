#if Server
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Imago

/// A ``ResultStore`` in S3 or an S3-compatible store (`--result-store
/// s3://BUCKET/PREFIX`), or in Google Cloud Storage through its XML API
/// (`gs://BUCKET/PREFIX`, with a loader for
/// ``S3DataLoader/Service/googleCloudStorage``): one object per result
/// under `PREFIX/`, named by the SHA-256 of its key, with its content type
/// and the entity tag and time in `x-amz-meta-imago-*` metadata (read back
/// as `x-goog-meta-imago-*` too, GCS's own name for it). A PUT replaces an
/// object whole.
public struct S3ResultStore: ResultStore {
    /// The bucket.
    public let bucket: String
    /// The key prefix, without slashes around it (may be empty).
    public let prefix: String
    /// What reads and writes the objects, with its signing configuration.
    public let loader: S3DataLoader

    /// A store in `bucket` under `prefix`, through `loader`.
    public init(bucket: String, prefix: String, loader: S3DataLoader) {
        self.bucket = bucket
        self.prefix = prefix.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        self.loader = loader
    }

    private func objectURL(for key: String) -> URL {
        let name = Self.objectName(for: key)
        return URL(string: "\(loader.service.scheme)://\(bucket)/" + (prefix.isEmpty ? "" : prefix + "/") + name)!
    }

    public func result(for key: String) async throws -> StoredResult? {
        let (data, response) = try await loader.data(for: URLRequest(url: objectURL(for: key)))
        guard let http = response as? HTTPURLResponse else { return nil }
        guard http.statusCode == 200 else {
            if http.statusCode == 404 { return nil }
            throw ImageServerError(.sourceFailed, "the result store answered \(http.statusCode)")
        }
        // GCS may answer the metadata written as x-amz-meta-* under its own prefix.
        func metadata(_ name: String) -> String? {
            http.value(forHTTPHeaderField: "x-amz-meta-imago-" + name) ?? http.value(forHTTPHeaderField: "x-goog-meta-imago-" + name)
        }
        guard let type = http.value(forHTTPHeaderField: "Content-Type"),
              let etag = metadata("etag"),
              let stored = metadata("stored").flatMap(Double.init),
              let length = metadata("length").flatMap(Int.init), length == data.count else { return nil }
        return StoredResult(data: data, contentType: type, etag: etag, storedAt: Date(timeIntervalSince1970: stored),
                            sourceCacheHeaders: SourceCacheHeaders(storedForm: metadata("source") ?? ""))
    }

    public func store(_ result: StoredResult, for key: String) async throws {
        let url = try loader.objectURL(for: objectURL(for: key))
        var request = URLRequest(url: url)
        request.httpMethod = "PUT"
        request.httpBody = result.data
        var metadata = [
            "Content-Type": result.contentType, "x-amz-meta-imago-etag": result.etag,
            "x-amz-meta-imago-stored": String(result.storedAt.timeIntervalSince1970), "x-amz-meta-imago-length": String(result.data.count),
        ]
        let cacheHeaders = result.sourceCacheHeaders.storedForm
        if !cacheHeaders.isEmpty { metadata["x-amz-meta-imago-source"] = cacheHeaders }
        var headers = metadata
        if let credentials = try await loader.signingCredentials() {
            let signer = AWSSignatureV4(credentials: credentials, region: loader.configuration.region, service: "s3")
            headers = signer.signedHeaders(method: "PUT", url: url, headers: metadata, payloadHash: AWSSignatureV4.payloadHash(of: result.data), date: Date())
        }
        for (name, value) in headers where name != "host" { request.setValue(value, forHTTPHeaderField: name) }
        let loaded = try await loader.transport.load(request)
        let status = (loaded.response as? HTTPURLResponse)?.statusCode ?? 0
        for try await _ in loaded.body {}
        guard (200...299).contains(status) else { throw ImageServerError(.sourceFailed, "the result store refused the write: \(status)") }
    }
}
#endif
