import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DataLoading {
    /// Loads the whole body of `request` and its response.
    ///
    /// Cancelling the calling Swift task cancels the load and throws
    /// `CancellationError`.
    ///
    /// - Parameter progress: Called after each chunk with the bytes received
    ///   so far and the expected total.
    /// - Returns: The body and the response. A loader that reports no
    ///   response metadata yields a plain `URLResponse` for the request URL.
    /// - Throws: What the loader reported as a failure, unchanged, or
    ///   `CancellationError`.
    public func data(
        for request: URLRequest,
        progress: (@Sendable (LoadingProgress) -> Void)? = nil
    ) async throws -> (Data, URLResponse) {
        do {
            try Task.checkCancellation()
            let loaded = try await load(request)
            let expected = loaded.response?.expectedContentLength ?? -1
            var body = Data()
            // Room for the announced body up front (capped: the header may lie).
            if expected > 0 { body.reserveCapacity(Int(min(expected, 16 << 20))) }
            for try await chunk in loaded.body {
                body.append(chunk)
                progress?(LoadingProgress(completed: Int64(body.count), total: expected >= 0 ? expected : nil))
            }
            // A cancelled task's stream ends early without an error.
            try Task.checkCancellation()
            let response = loaded.response ?? URLResponse(
                url: request.url ?? URL(fileURLWithPath: "/"),
                mimeType: nil,
                expectedContentLength: body.count,
                textEncodingName: nil
            )
            return (body, response)
        } catch where Task.isCancelled {
            // Whatever the loader made of the cancel, the caller sees CancellationError.
            throw CancellationError()
        }
    }
}
