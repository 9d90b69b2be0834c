import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// When a failed load is tried again, and how long to wait first.
///
/// The default retries a `GET` at most twice: after a transport failure
/// (no connection, a reset before any of the body arrived, a timeout) or a
/// `429` or `5xx` response. The wait is drawn at random between zero and an
/// exponentially growing cap ("full jitter", so many clients that failed
/// together do not come back together), unless the response says how long
/// to wait with `Retry-After`, which is honoured up to
/// ``maximumRetryAfter``.
///
/// ```swift
/// var policy = RetryPolicy()
/// policy.maximumRetries = 4
/// let loader = RetryingDataLoader(wrapping: URLSessionDataLoader(), policy: policy)
/// ```
public struct RetryPolicy: Sendable {
    /// How many times one request is tried again. Default: 2.
    public var maximumRetries: Int = 2
    /// The methods that may be retried (idempotent ones only). Default: `GET`.
    public var methods: Set<String> = ["GET"]
    /// The statuses that are retried. Default: 429 and every 5xx.
    public var retryableStatusCodes: Set<Int> = Set([429]).union(500...599)
    /// The loader failures that are retried, when none of the body has been
    /// passed on yet.
    public var retryableErrorCodes: Set<DataLoadingError.Code> = [.transport, .cannotConnect, .connectionLost, .timedOut]
    /// The cap of the first wait; it doubles with every retry. Default: 0.5 s.
    public var baseDelay: TimeInterval = 0.5
    /// The largest cap of a jittered wait. Default: 10 s.
    public var maximumDelay: TimeInterval = 10
    /// The longest `Retry-After` honoured; a server asking for more gets
    /// its response passed on instead. Default: 60 s.
    public var maximumRetryAfter: TimeInterval = 60
    /// Draws the jittered fraction of the cap, in `0...1`. Default: uniform.
    /// Tests inject a fixed value.
    public var jitter: @Sendable () -> Double = { Double.random(in: 0...1) }

    /// The defaults above.
    public init() {}

    /// The defaults above.
    public static let `default` = RetryPolicy()

    /// Never retries.
    public static let none: RetryPolicy = {
        var policy = RetryPolicy()
        policy.maximumRetries = 0
        return policy
    }()

    /// Whether `request` may be retried at all.
    public func allowsRetries(of request: URLRequest) -> Bool {
        maximumRetries > 0 && methods.contains((request.httpMethod ?? "GET").uppercased())
    }

    /// How long to wait before retry number `retry` (1 for the first), or
    /// `nil` when the server asked for a longer wait than ``maximumRetryAfter``.
    ///
    /// - Parameter retryAfter: The wait the server asked for, if it did.
    public func delay(beforeRetry retry: Int, retryAfter: TimeInterval?) -> TimeInterval? {
        if let retryAfter {
            return retryAfter <= maximumRetryAfter ? max(0, retryAfter) : nil
        }
        let exponent = min(max(retry - 1, 0), 30)
        let cap = min(maximumDelay, baseDelay * Double(1 << exponent))
        return cap * min(1, max(0, jitter()))
    }

    /// The wait a response asks for in `Retry-After`: whole seconds or an
    /// HTTP date (measured from `now`). `nil` when absent or unreadable.
    public static func retryAfter(in response: HTTPURLResponse, now: Date = Date()) -> TimeInterval? {
        guard let value = response.value(forHTTPHeaderField: "Retry-After")?.trimmingCharacters(in: .whitespaces) else {
            return nil
        }
        if let seconds = Int(value), seconds >= 0 { return TimeInterval(seconds) }
        guard let date = HTTPCachePolicy.httpDate(value) else { return nil }
        return max(0, (date.timeIntervalSince(now) * 1_000).rounded(.up) / 1_000)
    }
}
