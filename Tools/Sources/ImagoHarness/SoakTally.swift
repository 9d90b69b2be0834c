import CommandLineSupport
import Foundation
import SharedState
import Imago

/// How one request ended.
enum SoakOutcome: Sendable {
    case image(source: String)
    case typed(code: String, detail: String)
    case untyped(String)

    var isImage: Bool { if case .image = self { true } else { false } }

    /// `ok` or the pipeline's code: what ``SoakKind/expected`` lists.
    var code: String {
        switch self {
        case .image: "ok"
        case .typed(let code, _): code
        case .untyped: "untyped"
        }
    }

    /// The code with the stage's detail, as reports count it.
    var key: String {
        switch self {
        case .image: "ok"
        case .typed(let code, let detail): "\(code).\(detail)"
        case .untyped: "untyped"
        }
    }
}

/// Counts of outcomes, by kind, from any task.
final class SoakTally: Sendable {
    struct Counts: Sendable {
        var requests = 0
        var unexpected = 0
        var outcomes: [String: Int] = [:]
    }

    struct Snapshot: Sendable {
        var kinds: [(name: String, counts: Counts)]
        var sources: [String: Int]
        var untyped: Int
        var examples: [String]
    }

    private let kinds: [SoakKind]
    private let state: Locked<(counts: [Counts], sources: [String: Int], completed: Int, examples: [String])>

    init(kinds: [SoakKind]) {
        self.kinds = kinds
        state = Locked((Array(repeating: Counts(), count: kinds.count), [:], 0, []))
    }

    var completed: Int { state.withLock { $0.completed } }

    func record(kind: Int, path: String, outcome: SoakOutcome) {
        let expected = kinds[kind].expected.contains(outcome.code)
        state.withLock { state in
            state.completed += 1
            state.counts[kind].requests += 1
            state.counts[kind].outcomes[outcome.key, default: 0] += 1
            if case .image(let source) = outcome { state.sources[source, default: 0] += 1 }
            if !expected {
                state.counts[kind].unexpected += 1
                if state.examples.count < 10 {
                    let detail = if case .untyped(let text) = outcome { text } else { outcome.key }
                    state.examples.append("\(kinds[kind].name) \(path): \(detail)")
                }
            }
        }
    }

    func snapshot() -> Snapshot {
        state.withLock { state in
            Snapshot(
                kinds: zip(kinds, state.counts).map { ($0.name, $1) },
                sources: state.sources,
                untyped: state.counts.reduce(0) { $0 + $1.outcomes["untyped", default: 0] },
                examples: state.examples
            )
        }
    }
}
