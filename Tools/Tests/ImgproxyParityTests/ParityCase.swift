import Foundation

/// One case of a ported imgproxy test (`Cases/README.md` describes the format).
struct ParityCase: Sendable {
    /// The case file it is in, without `.json`.
    let file: String
    let test: String
    let from: String
    let environment: [String: String]
    let method: String
    let path: String
    let requestHeaders: [(String, String)]
    let origin: [String: OriginRoute]
    /// Text files written into the local root (`{fixtures}`) before any server starts.
    let files: [String: String]
    let expect: Expectation
    let verdict: Verdict

    /// A route of the case's origin.
    struct OriginRoute: Sendable {
        let file: String?
        let body: String?
        let status: Int
        let headers: [(String, String)]
    }

    /// What the answer must show; `nil` and empty parts are not checked.
    struct Expectation: Sendable {
        let status: Int?
        let headers: [(String, String)]
        let headersMatching: [(String, String)]
        let headersAbsent: [String]
        let image: (format: String?, width: Int?, height: Int?)?
        let bodyEqualsFile: String?
        let originRequestHeaders: [(String, String)]
        /// Headers the origin must not have received.
        let originRequestHeadersAbsent: [String]
        /// imgproxy refuses to start with the case's environment.
        let startFails: Bool
    }

    enum Verdict: Sendable, Equatable {
        case pass
        /// Imago differs by default; with these variables it behaves as imgproxy.
        case difference([String: String], why: String)
        /// Not visible over HTTP: listed, not run.
        case unobservable(String)
        /// imgproxy 3's behaviour that imgproxy 4 replaced: listed, not run.
        case superseded(String)
    }

    /// Whether the case runs (it is not unobservable or superseded).
    var runs: Bool {
        switch verdict {
        case .pass, .difference: true
        case .unobservable, .superseded: false
        }
    }

    /// `file/test`: how the known-failures list names a case.
    var name: String { "\(file)/\(test)" }

    /// The environment the case's server runs with (its own, plus a difference's setting).
    var serverEnvironment: [String: String] {
        if case .difference(let setting, _) = verdict { return environment.merging(setting) { $1 } }
        return environment
    }

    /// Every case of every file in `folder`.
    static func load(from folder: URL) throws -> [ParityCase] {
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }.sorted()
        return try files.flatMap { name -> [ParityCase] in
            let object = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent(name)))
            guard let table = object as? [String: Any], let cases = table["cases"] as? [[String: Any]] else {
                throw Malformed(file: name, reason: "no \"cases\" list")
            }
            return try cases.map { try ParityCase(String(name.dropLast(5)), $0) }
        }
    }

    struct Malformed: Error, CustomStringConvertible {
        let file: String
        let reason: String
        var description: String { "\(file): \(reason)" }
    }

    private init(_ file: String, _ item: [String: Any]) throws {
        func pairs(_ value: Any?) -> [(String, String)] {
            ((value as? [String: Any]) ?? [:]).map { ($0.key, "\($0.value)") }.sorted { $0.0 < $1.0 }
        }
        self.file = file
        test = item["test"] as? String ?? "?"
        from = item["from"] as? String ?? "?"
        environment = ((item["env"] as? [String: Any]) ?? [:]).mapValues { "\($0)" }
        let request = item["request"] as? [String: Any] ?? [:]
        guard let path = request["path"] as? String else { throw Malformed(file: file, reason: "\(test) has no request path") }
        self.path = path
        method = (request["method"] as? String ?? "GET").uppercased()
        requestHeaders = pairs(request["headers"])
        origin = ((item["origin"] as? [String: [String: Any]]) ?? [:]).mapValues { route in
            OriginRoute(file: route["file"] as? String, body: route["body"] as? String,
                        status: route["status"] as? Int ?? 200, headers: pairs(route["headers"]))
        }
        let expect = item["expect"] as? [String: Any] ?? [:]
        let image = (expect["image"] as? [String: Any]).map { ($0["format"] as? String, $0["width"] as? Int, $0["height"] as? Int) }
        self.expect = Expectation(
            status: expect["status"] as? Int, headers: pairs(expect["headers"]), headersMatching: pairs(expect["headersMatching"]),
            headersAbsent: expect["headersAbsent"] as? [String] ?? [], image: image,
            bodyEqualsFile: expect["bodyEqualsFile"] as? String, originRequestHeaders: pairs(expect["originRequestHeaders"]),
            originRequestHeadersAbsent: expect["originRequestHeadersAbsent"] as? [String] ?? [],
            startFails: expect["startFails"] as? Bool ?? false)
        files = ((item["files"] as? [String: Any]) ?? [:]).mapValues { "\($0)" }
        switch item["verdict"] {
        case let verdict as [String: Any] where verdict["unobservable"] != nil:
            self.verdict = .unobservable("\(verdict["unobservable"]!)")
        case let verdict as [String: Any] where verdict["superseded"] != nil:
            self.verdict = .superseded("\(verdict["superseded"]!)")
        case let verdict as [String: Any]:
            let setting = ((verdict["difference"] as? [String: Any]) ?? [:]).mapValues { "\($0)" }
            self.verdict = .difference(setting, why: verdict["why"] as? String ?? "")
        default:
            self.verdict = .pass
        }
    }
}
