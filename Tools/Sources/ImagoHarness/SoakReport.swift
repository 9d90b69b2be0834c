import CommandLineSupport
import Foundation
@_spi(Testing) import Imago

/// The figures and the checks.
struct SoakReport {
    let requests: Int
    let concurrency: Int
    let seconds: Double
    let tally: SoakTally.Snapshot
    let statistics: ImagePipeline.Statistics
    let memory: MemorySampler.Summary
    /// The resident set before the run, after the warm-up.
    let residentBeforeMB: Double?
    /// The resident set once the pipeline and its caches were released.
    let residentAfterMB: Double?
    let descriptorsBefore: Int?
    /// The descriptors open after the run, less the HTTP client's idle sockets to the server (`excluded`).
    let descriptorsAfter: (count: Int, excluded: Int)?
    let temporaryFiles: Int
    let diskCacheBytes: Int
    let diskCacheLimit: Int
    let serverConnections: Int
    let serverOpenConnections: Int
    /// Connections still open when the loads ended (the HTTP client's idle pool).
    let pooledConnections: Int

    /// How far the file descriptor count may end above where it started.
    static let descriptorMargin = 4
    /// Runs shorter than this report their memory figures without judging flatness.
    static let requestsToJudgeMemory = 5_000

    /// Whether this binary runs under the thread or address sanitizer, whose
    /// allocators keep freed memory and shadow it: its figures are reported,
    /// not judged.
    static let underSanitizer: Bool = dlsym(nil, "__tsan_init") != nil || dlsym(nil, "__asan_init") != nil

    var completed: Int { tally.kinds.reduce(0) { $0 + $1.counts.requests } }
    var unexpected: Int { tally.kinds.reduce(0) { $0 + $1.counts.unexpected } }
    var images: Int { tally.kinds.reduce(0) { $0 + $1.counts.outcomes["ok", default: 0] } }

    /// Each check, its result and what it saw.
    var checks: [(name: String, passed: Bool, detail: String)] {
        let memoryFlat: Bool
        if Self.underSanitizer {
            memoryFlat = true
        } else if requests < Self.requestsToJudgeMemory {
            // A short run is all transients (one gzip bomb holds ~100 MB for a
            // moment): its quarters say nothing about growth.
            memoryFlat = true
        } else if let first = memory.firstQuarterMB, let last = memory.lastQuarterMB {
            // Room for the gzip bombs' transients (each holds up to ~100 MB for a moment); a leak grows with the run.
            memoryFlat = last <= first * 1.2 + 32
        } else {
            memoryFlat = true   // too short a run to tell
        }
        let memoryReleased: Bool
        if Self.underSanitizer {
            memoryReleased = true
        } else if let before = residentBeforeMB, let after = residentAfterMB {
            memoryReleased = after <= before + 64
        } else {
            memoryReleased = true
        }
        let descriptors: Bool
        if let before = descriptorsBefore, let after = descriptorsAfter {
            descriptors = after.count <= before + Self.descriptorMargin && after.excluded <= concurrency
        } else {
            descriptors = true
        }
        func mb(_ value: Double?) -> String { value.map { String(format: "%.1f MB", $0) } ?? "n/a" }
        return [
            ("all requests completed", completed == requests, "\(completed) of \(requests)"),
            ("typed errors only", tally.untyped == 0, "\(tally.untyped) untyped"),
            ("expected outcomes", unexpected == 0, "\(unexpected) unexpected"),
            ("memory flat", memoryFlat, (Self.underSanitizer ? "not judged under a sanitizer; "
                : requests < Self.requestsToJudgeMemory ? "not judged under \(Self.requestsToJudgeMemory) requests; " : "") + "RSS first quarter \(mb(memory.firstQuarterMB)), last quarter \(mb(memory.lastQuarterMB)), peak \(mb(memory.peakMB))"),
            ("memory released", memoryReleased, (Self.underSanitizer ? "not judged under a sanitizer; " : "") + "RSS \(mb(residentBeforeMB)) before the run, \(mb(residentAfterMB)) once the pipeline was released"),
            ("file descriptors released", descriptors, "\(descriptorsBefore.map(String.init) ?? "n/a") before, "
                + (descriptorsAfter.map { "\($0.count) after, besides \($0.excluded) idle client sockets kept by URLSession" } ?? "n/a after")),
            ("connections bounded", pooledConnections <= concurrency && serverOpenConnections == 0,
             "\(pooledConnections) idle at the end (at most \(concurrency)), \(serverOpenConnections) open after the server stopped; \(serverConnections) accepted"),
            ("no temporary cache files", temporaryFiles == 0, "\(temporaryFiles) left; disk cache \(diskCacheBytes >> 10) KB, limit \(diskCacheLimit >> 10) KB"),
        ]
    }

    var passed: Bool { checks.allSatisfy(\.passed) }

    var lines: [String] {
        var lines = [String(format: "soak: %d requests in %.1f s, %.0f requests/s, concurrency %d; %d images, %d failed as expected",
                            requests, seconds, Double(completed) / seconds, concurrency, images, completed - images - unexpected)]
        lines.append("images from " + ["network", "disk", "memory"].map { "\($0) \(tally.sources[$0, default: 0])" }.joined(separator: ", ")
                     + "; \(statistics.downloads) downloads, \(statistics.decodes) decodes; server saw \(serverConnections) connections")
        lines.append("kind                      requests  outcomes")
        for (name, counts) in tally.kinds {
            let outcomes = counts.outcomes.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            lines.append(name.padding(toLength: 24, withPad: " ", startingAt: 0) + String(format: "  %8d  ", counts.requests) + outcomes
                         + (counts.unexpected > 0 ? "  (\(counts.unexpected) UNEXPECTED)" : ""))
        }
        for (name, passed, detail) in checks {
            lines.append((passed ? "pass  " : "FAIL  ") + name + ": " + detail)
        }
        lines.append(contentsOf: tally.examples.map { "unexpected: " + $0 })
        return lines
    }

    var json: JSONValue {
        func counts(_ dictionary: [String: Int]) -> JSONValue {
            .object(dictionary.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) })
        }
        func optional(_ value: Double?) -> JSONValue { value.map(JSONValue.double) ?? .null }
        func optional(_ value: Int?) -> JSONValue { value.map(JSONValue.int) ?? .null }
        var byCode: [String: Int] = [:]
        for (_, kind) in tally.kinds {
            for (key, count) in kind.outcomes { byCode[String(key.prefix { $0 != "." }), default: 0] += count }
        }
        return .object([
            ("benchmark", .string("soak")), ("passed", .bool(passed)),
            ("requests", .int(requests)), ("completed", .int(completed)), ("concurrency", .int(concurrency)),
            ("seconds", .double(seconds)), ("requests_per_s", .double(Double(completed) / seconds)),
            ("images", .int(images)), ("unexpected", .int(unexpected)), ("untyped", .int(tally.untyped)),
            ("outcomes", counts(byCode)),
            ("kinds", .object(tally.kinds.map { name, kind in
                (name, .object([("requests", .int(kind.requests)), ("unexpected", .int(kind.unexpected)), ("outcomes", counts(kind.outcomes))]))
            })),
            ("sources", counts(tally.sources)),
            ("downloads", .int(statistics.downloads)), ("decodes", .int(statistics.decodes)),
            ("rss_first_quarter_mb", optional(memory.firstQuarterMB)), ("rss_last_quarter_mb", optional(memory.lastQuarterMB)),
            ("peak_rss_mb", optional(memory.peakMB)), ("rss_before_mb", optional(residentBeforeMB)), ("rss_after_mb", optional(residentAfterMB)),
            ("fds_before", optional(descriptorsBefore)), ("fds_after", optional(descriptorsAfter?.count)),
            ("fds_idle_client_sockets", optional(descriptorsAfter?.excluded)), ("pooled_connections", .int(pooledConnections)),
            ("temporary_files", .int(temporaryFiles)), ("disk_cache_bytes", .int(diskCacheBytes)), ("disk_cache_limit", .int(diskCacheLimit)),
            ("server_connections", .int(serverConnections)),
            ("checks", .object(checks.map { ($0.name.replacingOccurrences(of: " ", with: "_"), .bool($0.passed)) })),
        ])
    }
}
