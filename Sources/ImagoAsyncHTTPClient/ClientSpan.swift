#if AsyncHTTPClient
import AsyncHTTPClient
import Foundation
import NIOHTTP1
import Tracing

/// One request of ``AsyncHTTPClientDataLoader`` as a client span: named
/// after the method, with OpenTelemetry's HTTP attributes, from the request
/// to the body's end. Its context goes out in the request's headers, so the
/// origin continues the trace.
struct ClientSpan: Sendable {
    private let span: any Span

    /// Starts the span under the current trace and writes its context into
    /// `request`'s headers (replacing any sent already); `nil` outside a trace.
    init?(for request: inout HTTPClientRequest, url: URL) {
        guard let parent = ServiceContext.current else { return nil }
        let method = request.method.rawValue
        let span = InstrumentationSystem.tracer.startSpan(method, context: parent, ofKind: .client)
        span.updateAttributes { attributes in
            attributes["http.request.method"] = method
            attributes["url.full"] = Self.withoutCredentials(url)
            attributes["server.address"] = url.host
            attributes["server.port"] = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
        }
        InstrumentationSystem.instrument.inject(span.context, into: &request.headers, using: HeadersInjector())
        self.span = span
    }

    /// Records the response's status; 400 and above mark the span failed.
    func received(status: Int) {
        span.attributes["http.response.status_code"] = status
        if status >= 400 { span.setStatus(SpanStatus(code: .error)) }
    }

    /// Ends the span with the failure that stopped the request.
    func end(failure: any Error) {
        span.recordError(failure)
        span.setStatus(SpanStatus(code: .error))
        span.end()
    }

    /// Ends the span when the body's stream ends: finished, failed or dropped.
    func end(after termination: AsyncThrowingStream<Data, any Error>.Continuation.Termination) {
        if case .finished(let failure?) = termination {
            end(failure: failure)
        } else {
            span.end()
        }
    }

    /// `url` as text without a user name or password.
    static func withoutCredentials(_ url: URL) -> String {
        guard url.user != nil || url.password != nil, var parts = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return url.absoluteString
        }
        (parts.user, parts.password) = (nil, nil)
        return parts.string ?? url.absoluteString
    }
}

/// Writes trace context into AsyncHTTPClient's headers, one value per name.
struct HeadersInjector: Injector {
    func inject(_ value: String, forKey key: String, into headers: inout HTTPHeaders) {
        headers.replaceOrAdd(name: key, value: value)
    }
}
#endif
