#if Server
import Crypto
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Imago
import ImagoCodecs
import Logging
import Metrics
import Tracing

/// The server's swift-metrics instruments; no-ops unless the application
/// bootstraps a metrics backend. Each image request is counted here once
/// (`imago_server_responses` by status, `imago_server_request_duration`);
/// an application that also installs an HTTP metrics middleware counts the
/// same requests a second time under its own names. `imago_server_renders`
/// counts outputs made here (not answered from the output cache or the
/// result store): across replicas, renders per distinct image.
struct ServerMetrics: Sendable {
    let inFlight = Meter(label: "imago_server_in_flight")

    func responded(_ reply: ImageServerReply, nanoseconds: UInt64) {
        Counter(label: "imago_server_responses", dimensions: [("status", String(reply.status))]).increment()
        Timer(label: "imago_server_request_duration").recordNanoseconds(Int64(clamping: nanoseconds))
        Counter(label: "imago_server_bytes", dimensions: [("direction", "out")]).increment(by: reply.body.count)
    }

    func resultStore(_ outcome: String) {
        Counter(label: "imago_server_result_store", dimensions: [("result", outcome)]).increment()
    }

    func outputCache(hit outcome: String) {
        Counter(label: "imago_server_output_cache", dimensions: [("result", outcome)]).increment()
    }

    func rendered(_ rendered: RenderedImage) {
        Counter(label: "imago_server_renders").increment()
        Counter(label: "imago_server_sources", dimensions: [("layer", rendered.sourceLayer)]).increment()
        if rendered.sourceLayer == ImageResponse.Source.network.rawValue, let bytes = rendered.sourceByteCount {
            Counter(label: "imago_server_bytes", dimensions: [("direction", "in")]).increment(by: bytes)
        }
        if let loading = rendered.sourceMetrics.loadingDuration {
            Timer(label: "imago_server_load_duration").recordNanoseconds(Int64(loading * 1e9))
        }
        Timer(label: "imago_server_render_duration").recordNanoseconds(Int64(rendered.renderingTime * 1e9))
    }

    func failed(_ error: ImageServerError) {
        Counter(label: "imago_server_failures", dimensions: [("code", error.code.name)]).increment()
    }
}
#endif
