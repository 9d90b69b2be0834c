import Foundation
import Imago
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A class-backed error, so tests can check that the very same instance comes back.
final class IdentityError: Error, CustomStringConvertible {
    let name: String
    init(_ name: String = "identity") { self.name = name }
    var description: String { "IdentityError(\(name))" }
}

/// Runs `body` and returns the error it throws, or `nil` when it succeeds.
func caughtError<T>(_ body: () async throws -> T) async -> (any Error)? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error
    }
}

/// Runs `body` and returns the error it throws, or `nil` when it succeeds.
func caughtError<T>(_ body: () throws -> T) -> (any Error)? {
    do {
        _ = try body()
        return nil
    } catch {
        return error
    }
}

func httpResponse(_ url: URL, status: Int, contentType: String?) -> HTTPURLResponse {
    HTTPURLResponse(
        url: url,
        statusCode: status,
        httpVersion: "HTTP/1.1",
        headerFields: contentType.map { ["Content-Type": $0] } ?? [:]
    )!
}

let exampleURL = URL(string: "https://images.example.com/cat.png")!

/// Waits until `condition` holds: yields to other tasks, and between rounds
/// suspends for a millisecond so work on other threads (the loader's,
/// dispatch queues') gets the CPU even when many tests run at once. Records
/// an issue if the condition still fails after about five seconds, so a
/// broken expectation fails the test instead of hanging the run.
func eventually(
    _ condition: () -> Bool,
    sourceLocation: SourceLocation = #_sourceLocation
) async {
    for round in 0..<5_000 {
        for _ in 0..<10 {
            if condition() { return }
            await Task.yield()
        }
        _ = round
        try? await Task.sleep(nanoseconds: 1_000_000)
    }
    if !condition() { Issue.record("condition never became true", sourceLocation: sourceLocation) }
}
