import Foundation
import Imago
import ImagoCodecs
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Turns SOURCE arguments into URLs and loads their bytes.
struct SourceLoader: Sendable {
    let client: NetworkClient

    init(client: NetworkClient = NetworkClient()) {
        self.client = client
    }

    /// The URL of a SOURCE: an `http(s)` or `file` URL, or a path.
    static func url(for source: String) -> URL {
        let lowered = source.lowercased()
        if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") || lowered.hasPrefix("file://"),
           let url = URL(string: source) {
            return url
        }
        let path = (source as NSString).expandingTildeInPath
        return URL(fileURLWithPath: path)
    }

    /// Where the bytes came from, as the JSON output reports it.
    static func cacheKind(for url: URL) -> String {
        url.isFileURL ? "none" : "network"
    }

    /// Loads and validates the bytes of an image (content type and status).
    func bytes(of url: URL) async throws -> Data {
        let handler = ResponseHandler<Data>(accepting: .images) { $0 }
        return try await client.fetch(URLRequest(url: url), handler: handler)
    }

    /// Reads SOURCE lines from a file: one per line, blank lines and `#` comments skipped.
    static func sources(inFile path: String) throws -> [String] {
        let text = try String(contentsOf: url(for: path), encoding: .utf8)
        return text.split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }
}

/// A failure as the command line reports it: a stable code and a message.
struct Failure: Error {
    let code: String
    let message: String

    /// Maps any error from loading, validation, decoding or encoding.
    init(_ error: any Error) {
        switch error {
        case let error as NetworkClientError:
            self.init(error.underlying)
        case let error as ImagePipelineError:
            if let underlying = error.underlying, error.code != .processingFailed {
                self.init(underlying)
            } else {
                self.init(code: "pipeline.\(error.code)", message: error.description)
            }
        case let error as DataLoadingError:
            self.init(code: "loading.\(error.code)", message: error.message)
        case let error as ResponseError:
            if error.code == .decodingFailed, let underlying = error.underlying {
                self.init(underlying)
            } else {
                self.init(code: "response.\(error.code)", message: error.description)
            }
        case let error as ImageDecodingError:
            self.init(code: "decoding.\(error.code)", message: error.description)
        case let error as ImageEncodingError:
            self.init(code: "encoding.\(error.code)", message: error.description)
        case let error as Failure:
            self = error
        default:
            self.init(code: "error", message: "\(error)")
        }
    }

    init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    /// The JSON line for a failed source.
    func json(source: String) -> JSONValue {
        .object([
            ("source", .string(source)),
            ("ok", .bool(false)),
            ("error", .object([("code", .string(code)), ("message", .string(message))])),
        ])
    }
}

extension ContinuousClock.Instant.Duration {
    /// The duration in milliseconds.
    var milliseconds: Double {
        Double(components.seconds) * 1_000 + Double(components.attoseconds) / 1e15
    }
}
