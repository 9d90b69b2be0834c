#if Server && canImport(Hummingbird)
import Foundation
import HTTPTypes
import Hummingbird
import Imago
import ImagoSVG
import Logging
import Tracing

/// The image server as Hummingbird routes: mount it on a router (or a
/// group of one) and every `GET` or `HEAD` below that path is an image
/// path as ``ImageServerPath`` describes it (the format imgproxy made common).
///
/// ```swift
/// let router = Router()
/// let images = ImageServer<BasicRequestContext>(configuration: ImageServerConfiguration(signingKeys: [key]))
/// images.addRoutes(to: router.group("img"))
/// try await Application(router: router).runService()
/// ```
///
/// Answers are never thrown: errors come back as JSON bodies with the
/// statuses of ``ImageServerError/Code``. Each request logs one line at
/// `info` through the request context's logger.
///
/// Each request is a server span (swift-distributed-tracing; nothing until
/// the application bootstraps a tracer) named after its method and route,
/// `GET /**`, that continues the trace of the request's `traceparent`
/// header (unless ``ImageServerConfiguration/continuesClientTraces`` is
/// off), or the span a tracing middleware opened before it. Its children
/// are `store.lookup`, `source.fetch`, `decode`, `process`, `encode` and
/// `store.write` (`animate` for an animation, `svg.sanitize` for an SVG
/// answer); the requests to HTTP, S3 and GCS origins and to a result store in either
/// carry the trace on in their `traceparent`. The request's log line is
/// written inside the span, so a logging metadata provider can add its ids.
@available(macOS 14, iOS 17, tvOS 17, visionOS 1, *)
public struct ImageServer<Context: RequestContext>: Sendable {
    let engine: ImageServerEngine

    /// Creates the server; its pipeline, loader and caches live as long as it does.
    public init(configuration: ImageServerConfiguration) {
        engine = ImageServerEngine(configuration: configuration)
    }

    /// The configuration the server was created with.
    public var configuration: ImageServerConfiguration { engine.configuration }

    /// The pipeline that loads and decodes sources: for tests of merged work.
    package var pipeline: ImagePipeline { engine.pipeline }

    /// How many sources the server has decoded (a still or an animation each).
    package var decodeCount: Int { engine.decodeCount }

    /// How many distinct images are being made or wait for a worker.
    package var jobsInProgress: Int { engine.jobsInProgress }

    /// Renders a photo-like JPEG and PNG made in memory on each worker
    /// (fitted to 256 px, encoded as a JPEG), so that the first requests do
    /// not pay for the first use of the codecs and the resampler (code paged
    /// in, tables built, the allocator's arenas grown). Call it before the
    /// server takes requests, as `imago serve` does; it takes a few
    /// milliseconds.
    ///
    /// - Returns: The outputs' format and size, one per source; empty when a
    ///   render failed (a codec the build lacks).
    @discardableResult
    public func warmUp() async -> [ImageInfo] {
        await engine.warmUp()
    }

    /// Adds `GET` routes for every path below `router`'s own, and `HEAD`
    /// routes (the image's headers, rendering it) unless `head` is `false`.
    public func addRoutes(to router: some RouterMethods<Context>, head: Bool = true) {
        router.get("**") { request, context in
            await self.respond(to: request, context: context)
        }
        guard head else { return }
        router.head("**") { request, context in
            await self.respond(to: request, context: context).createHeadResponse()
        }
    }

    /// Answers one request routed to the server, in a server span of its own.
    public func respond(to request: Request, context: Context) async -> Response {
        // A span a middleware opened is the parent; else the client's `traceparent`.
        var trace = ServiceContext.current ?? .topLevel
        if ServiceContext.current == nil, engine.configuration.continuesClientTraces {
            InstrumentationSystem.instrument.extract(request.headers, into: &trace, using: HTTPFieldsExtractor())
        }
        let route = context.endpointPath
        return await withSpan(route.map { "\(request.method) \($0)" } ?? "\(request.method)", context: trace, ofKind: .server) { span in
            span.updateAttributes { attributes in
                attributes["http.request.method"] = request.method.rawValue
                attributes["http.route"] = route
                attributes["url.path"] = request.uri.path
            }
            return await answer(request, context: context, span: span)
        }
    }

    private func answer(_ request: Request, context: Context, span: any Span) async -> Response {
        let started = DispatchTime.now().uptimeNanoseconds
        // The image path is the raw remainder the router captured (still
        // percent-encoded, slashes kept): exactly what was signed.
        let path: String
        if let captured = context.parameters[Parameters.recursiveCaptureKey] {
            path = "/" + String(captured.base[captured.startIndex...])
        } else {
            path = request.uri.path
        }
        // HTTP/1's Host arrives as the request's authority, not among its fields.
        let fields = request.headers.lazy.map { ($0.name.canonicalName, $0.value) } + (request.head.authority.map { [("host", $0)] } ?? [])
        let reply = await engine.reply(path: path, headers: RequestHeaders(fields))
        var headers = HTTPFields()
        for (name, value) in reply.headers {
            if let field = HTTPField.Name(name) { headers[field] = value }
        }
        // Nothing the server answers runs or loads anything in a browser, as imgproxy's answers.
        if headers[.contentSecurityPolicy] == nil {
            headers[.contentSecurityPolicy] = ImageServerHeadersMiddleware<Context>.contentSecurityPolicy
        }
        span.attributes["http.response.status_code"] = reply.status
        span.attributes["imago.outcome"] = reply.outcome
        if reply.status >= 500 { span.setStatus(SpanStatus(code: .error)) }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6
        context.logger.info("\(request.method) \(path) \(reply.status)", metadata: [
            "status": "\(reply.status)",
            "bytes": "\(request.method == .head ? 0 : reply.body.count)",
            "ms": "\(String(format: "%.1f", elapsed))",
            "outcome": "\(reply.outcome)",
        ])
        let body: ResponseBody
        if let stream = reply.stream {
            let first = reply.body
            body = ResponseBody { writer in
                // The lease is held until the body is sent or dropped.
                withExtendedLifetime(stream.lease) {}
                if !first.isEmpty { try await writer.write(ByteBuffer(bytes: first)) }
                for try await chunk in stream.rest { try await writer.write(ByteBuffer(bytes: chunk)) }
                try await writer.finish(nil)
            }
        } else {
            body = ResponseBody(byteBuffer: ByteBuffer(bytes: reply.body))
        }
        return Response(status: HTTPResponse.Status(code: reply.status), headers: headers, body: body)
    }
}

/// Reads trace context (`traceparent`, `tracestate`) from a request's fields.
struct HTTPFieldsExtractor: Extractor {
    func extract(key: String, from fields: HTTPFields) -> String? {
        HTTPField.Name(key).flatMap { fields[$0] }
    }
}
#endif
