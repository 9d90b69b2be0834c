import Foundation
import Imago
import ImagoCodecs
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Turns SOURCE arguments into URLs and loads their bytes.
public struct SourceLoader: Sendable {
    /// The client that loads and validates.
    public let client: NetworkClient

    /// Creates a loader over `client`; by default the loader every command
    /// uses (``dataLoader(concurrency:)``).
    public init(client: NetworkClient = NetworkClient(loader: SourceLoader.dataLoader(concurrency: 1))) {
        self.client = client
    }

    /// The loader of every command: files from disk, `http(s)` through
    /// AsyncHTTPClient with retries, `concurrency` connections per host.
    public static func dataLoader(concurrency: Int) -> DataLoader {
        DataLoader(network: NetworkLoaderKind.asynchttpclient.make(connectionsPerHost: concurrency))
    }

    /// The URL of a SOURCE: an `http(s)` or `file` URL, or a path.
    public static func url(for source: String) -> URL {
        let lowered = source.lowercased()
        if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") || lowered.hasPrefix("file://"),
           let url = URL(string: source) {
            return url
        }
        let path = (source as NSString).expandingTildeInPath
        return URL(fileURLWithPath: path)
    }

    /// Where the bytes came from, as the JSON output reports it.
    public static func cacheKind(for url: URL) -> String {
        url.isFileURL ? "none" : "network"
    }

    /// Loads and validates the bytes of an image (content type and status).
    public func bytes(of url: URL) async throws -> Data {
        try await client.data(from: url, accepting: .images)
    }

    /// Reads SOURCE lines from a file: one per line, blank lines and `#` comments skipped.
    public static func sources(inFile path: String) throws -> [String] {
        let text = try String(contentsOf: url(for: path), encoding: .utf8)
        return text.split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }
}

/// A failure as the command line reports it: a stable code and a message.
public struct Failure: Error {
    /// A stable code, such as `loading.timedOut`.
    public let code: String
    /// One line for people.
    public let message: String

    /// Maps any error from loading, validation, decoding or encoding.
    public init(_ error: any Error) {
        switch error {
        case let error as NetworkClientError:
            if let underlying = error.underlying {
                self.init(underlying)
            } else {
                self.init(code: "client.\(error.code)", message: error.description)
            }
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

    /// A failure with its code and message.
    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    /// The JSON line for a failed source.
    public func json(source: String) -> JSONValue {
        .object([
            ("source", .string(source)),
            ("ok", .bool(false)),
            ("error", .object([("code", .string(code)), ("message", .string(message))])),
        ])
    }
}

extension ContinuousClock.Instant.Duration {
    /// The duration in milliseconds.
    public var milliseconds: Double {
        Double(components.seconds) * 1_000 + Double(components.attoseconds) / 1e15
    }
}
