import Foundation
import ChildProcesses
import Testing

/// The repository must check out and build on a case-insensitive disk (the
/// default on macOS), where two paths that differ only in letter case are
/// one path.
@Suite struct RepositoryLayoutTests {
    /// The repository's root: two folders above this file.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The tracked paths, with every folder on the way: `git ls-files` in a
    /// checkout, else every file outside build and hidden folders.
    static func trackedPaths() throws -> [String] {
        let files: [String]
        if FileManager.default.fileExists(atPath: root.appendingPathComponent(".git").path), let listed = try? gitFiles() {
            files = listed
        } else {
            files = walk()
        }
        var paths = Set<String>()
        for file in files {
            var components = file.split(separator: "/").map(String.init)
            while !components.isEmpty {
                paths.insert(components.joined(separator: "/"))
                components.removeLast()
            }
        }
        return paths.sorted()
    }

    private static func gitFiles() throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "-C", root.path, "ls-files", "-z"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.startTiedToThisProcess()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CocoaError(.fileReadUnknown) }
        return data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }

    private static func walk() -> [String] {
        let base = root.standardizedFileURL.path + "/"
        var files: [String] = []
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isDirectoryKey], options: [.skipsHiddenFiles])
        while let url = enumerator?.nextObject() as? URL {
            let path = url.standardizedFileURL.path
            guard path.hasPrefix(base) else { continue }
            files.append(String(path.dropFirst(base.count)))
        }
        return files
    }

    /// The groups of paths that a case-insensitive disk would merge.
    static func caseCollisions(in paths: [String]) -> [[String]] {
        Dictionary(grouping: paths) { $0.lowercased() }.values.filter { $0.count > 1 }.map { $0.sorted() }.sorted { $0[0] < $1[0] }
    }

    @Test func noTwoTrackedPathsDifferOnlyInCase() throws {
        let paths = try Self.trackedPaths()
        #expect(paths.contains("Package.swift"))
        #expect(paths.contains("Sources/Imago"))
        #expect(Self.caseCollisions(in: paths) == [])
    }

    @Test func theCheckFindsFoldersThatDifferOnlyInCase() {
        // The layout this check was written for: the library's and the tool's folders.
        let collisions = Self.caseCollisions(in: ["Sources/Imago", "Sources/imago", "Sources/Imago/A.swift", "README.md"])
        #expect(collisions == [["Sources/Imago", "Sources/imago"]])
    }

    /// The lines of `text` that cite a file outside the repository: the
    /// brief it was planned from (`DESIGN.md`, "DESIGN 7"), or a path that
    /// climbs out of it (`../shared/...`).
    static func outsideCitations(in text: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter { line in
            line.contains("DESIGN.md") || line.contains("STYLE.md") || line.contains("../shared")
                || line.range(of: #"DESIGN \d"#, options: .regularExpression) != nil
        }
    }

    @Test func noTrackedFileCitesAFileOutsideTheRepository() throws {
        let base = Self.root
        var citations: [String] = []
        let textExtensions: Set<String> = ["", "swift", "md", "sh", "py", "c", "h", "template", "conf", "txt", "yml"]
        for path in try Self.trackedPaths() where textExtensions.contains(URL(fileURLWithPath: path).pathExtension) {
            let url = base.appendingPathComponent(path)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue,
                  let text = try? String(contentsOf: url, encoding: .utf8) else { continue }
            citations += Self.outsideCitations(in: text).map { "\(path): \($0)" }
        }
        // This file's own examples are the exception.
        citations.removeAll { $0.hasPrefix("Tests/ImagoTests/RepositoryLayoutTests.swift") }
        #expect(citations == [])
    }

    @Test func theCitationCheckFindsTheBriefAndPathsOutside() {
        let text = "/// DESIGN 7: the server\nplain line\nsee ../shared/corpora\n(see DESIGN.md)"
        #expect(Self.outsideCitations(in: text).count == 3)
    }
}
