#if Server && canImport(Hummingbird)
import Foundation
import HTTPTypes
import Hummingbird
import Imago
import Logging

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
    @_spi(Testing) public var pipeline: ImagePipeline { engine.pipeline }

    /// How many sources the server has decoded (a still or an animation each).
    @_spi(Testing) public var decodeCount: Int { engine.decodeCount }

    /// How many distinct images are being made or wait for a worker.
    @_spi(Testing) public var jobsInProgress: Int { engine.jobsInProgress }

    /// Adds `GET` and `HEAD` routes for every path below `router`'s own.
    public func addRoutes(to router: some RouterMethods<Context>) {
        router.get("**") { request, context in
            await self.respond(to: request, context: context)
        }
        router.head("**") { request, context in
            await self.respond(to: request, context: context).createHeadResponse()
        }
    }

    /// Answers one request routed to the server.
    public func respond(to request: Request, context: Context) async -> Response {
        let started = DispatchTime.now().uptimeNanoseconds
        // The image path is the raw remainder the router captured (still
        // percent-encoded, slashes kept): exactly what was signed.
        let path: String
        if let captured = context.parameters[Parameters.recursiveCaptureKey] {
            path = "/" + String(captured.base[captured.startIndex...])
        } else {
            path = request.uri.path
        }
        let reply = await engine.reply(
            path: path,
            accept: Self.joined(request.headers[values: .accept]),
            ifNoneMatch: Self.joined(request.headers[values: .ifNoneMatch])
        )
        var headers = HTTPFields()
        for (name, value) in reply.headers {
            if let field = HTTPField.Name(name) { headers[field] = value }
        }
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

    private static func joined(_ values: [String]) -> String? {
        values.isEmpty ? nil : values.joined(separator: ", ")
    }
}
#endif
