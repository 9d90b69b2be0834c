/// What every error of Imago's layers has in common: a code that names
/// what failed, and the error of the layer below, passed on unchanged.
///
/// ``DataLoadingError``, ``ResponseError``, ``ImageDecodingError``,
/// ``ImageEncodingError``, ``ImagePipelineError`` and ``NetworkClientError``
/// conform. Whatever layer an error surfaced from, a code of any layer
/// beneath it can be matched without unwrapping `underlying` by hand:
///
/// ```swift
/// do { _ = try await client.image(from: url) }
/// catch let error where ResponseError.Code.unacceptableStatus.matches(error) { showNotFound() }
/// catch let error as ImagePipelineError where error.contains(DataLoadingError.Code.timedOut) { retryLater() }
/// ```
public protocol LayeredError: Error, Sendable, CustomStringConvertible {
    /// What failed, in this layer's words.
    var code: ErrorCode<Self> { get }
    /// The error of the layer below, unchanged (same value, same identity).
    var underlying: (any Error)? { get }
}

extension LayeredError {
    /// Whether this error or one beneath it (through ``underlying``) has `code`.
    public func contains<Layer: LayeredError>(_ code: ErrorCode<Layer>) -> Bool {
        first(Layer.self)?.code == code
    }

    /// This error, or the first one beneath it, of type `type`.
    ///
    /// ```swift
    /// let status = pipelineError.first(ResponseError.self)?.statusCode
    /// ```
    public func first<Found: Error>(_ type: Found.Type) -> Found? {
        var current: (any Error)? = self
        // A chain is a few layers deep; the bound only guards against a cycle.
        for _ in 0..<32 {
            guard let error = current else { return nil }
            if let found = error as? Found { return found }
            current = (error as? any LayeredError)?.underlying
        }
        return nil
    }
}

extension ErrorCode where Layer: LayeredError {
    /// Whether `error` is a ``LayeredError`` whose chain holds this code:
    /// `catch let error where DataLoadingError.Code.timedOut.matches(error)`.
    ///
    /// (A `~=` operator would let `catch` name a code directly, but it makes
    /// every `case .member` over any other error type ambiguous.)
    public func matches(_ error: any Error) -> Bool {
        (error as? any LayeredError)?.contains(self) ?? false
    }
}
