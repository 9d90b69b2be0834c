#if Server
import Crypto
import Foundation
import Imago

/// An encoded result kept in a ``ResultStore``: the bytes, their type, their
/// entity tag and when they were made.
public struct StoredResult: Sendable, Hashable {
    /// The encoded image.
    public var data: Data
    /// Its `Content-Type`.
    public var contentType: String
    /// Its strong entity tag, quoted.
    public var etag: String
    /// When it was rendered.
    public var storedAt: Date
    /// What its source's response said about caching (validators and
    /// caching headers), which the answer passes on.
    public var sourceCacheHeaders: SourceCacheHeaders

    /// Creates a stored result.
    public init(data: Data, contentType: String, etag: String, storedAt: Date, sourceCacheHeaders: SourceCacheHeaders = SourceCacheHeaders()) {
        self.data = data
        self.contentType = contentType
        self.etag = etag
        self.storedAt = storedAt
        self.sourceCacheHeaders = sourceCacheHeaders
    }
}

/// Where rendered images are kept for every replica of the server
/// (`--result-store`): a render is written once, and any replica answers a
/// later request for it from the store, without the source.
///
/// A store writes every object whole (readers never see part of one) and
/// returns `nil` for what it does not hold. The server treats a store's
/// failures as misses: a warning and a metric, never an error for the client.
public protocol ResultStore: Sendable {
    /// The result under `key`, or `nil` when there is none.
    func result(for key: String) async throws -> StoredResult?
    /// Keeps `result` under `key`, replacing what was there.
    func store(_ result: StoredResult, for key: String) async throws
}

extension SourceCacheHeaders {
    /// The headers as one line of base64url JSON, for a store's metadata;
    /// empty when there are none.
    var storedForm: String {
        guard self != SourceCacheHeaders() else { return "" }
        let fields = ["etag": etag, "last-modified": lastModified, "cache-control": cacheControl, "expires": expires].compactMapValues { $0 }
        let json = (try? JSONSerialization.data(withJSONObject: fields, options: .sortedKeys)) ?? Data()
        // A source's headers are its own: at most 1 KB of them is kept, within S3's 2 KB of
        // metadata, or none (the answer then carries no source validators, never a failed write).
        return json.count <= 1024 ? SigningKey.base64URL(json) : ""
    }

    /// The headers of ``storedForm``; none when `text` is empty or damaged.
    init(storedForm text: some StringProtocol) {
        guard let data = SigningKey.data(base64URL: text),
              let fields = try? JSONSerialization.jsonObject(with: data) as? [String: String] else {
            self.init()
            return
        }
        self.init(etag: fields["etag"], lastModified: fields["last-modified"], cacheControl: fields["cache-control"], expires: fields["expires"])
    }
}

extension ResultStore {
    /// The name a store gives the object of `key`: its SHA-256 in hex.
    static func objectName(for key: String) -> String {
        SHA256.hash(data: Data(key.utf8)).lowercaseHex
    }
}
#endif
