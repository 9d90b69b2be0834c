// The image server's snippets in the README (see DocumentationSnippets.swift).
import Foundation
import ChildProcesses
import Hummingbird
import ImagoServer
import Testing

enum ServerSnippets {
    static func signing(keyHex: String, saltHex: String) throws -> String {
        // snippet: readme-server-signing
        let key = try SigningKey(hexKey: keyHex, hexSalt: saltHex)
        var options = ProcessingOptions()
        options.width = 256
        options.height = 256
        let path = ImageServerPath(source: URL(string: "https://images.example/cat.jpg")!, options: options)
            .path(signedWith: key)
        // "/{signature}/rs:fit:256:256:0/plain/https%3A%2F%2Fimages.example%2Fcat.jpg"
        // end snippet
        return path
    }

    static func mount(key: SigningKey) async throws {
        // snippet: readme-server-mount
        var configuration = ImageServerConfiguration(signingKeys: [key])
        configuration.sourcePolicy = SourcePolicy(allowedHosts: ["images.example", "*.cdn.example"])
        let router = Router()
        ImageServer<BasicRequestContext>(configuration: configuration).addRoutes(to: router.group("img"))
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 8080)))
        try await app.runService()
        // end snippet
    }
}

/// The README's signing snippets, in Swift, Python and the shell, agree
/// with each other and with the server's check.
@Suite struct SigningRecipeTests {
    static let keyHex = "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881"
    static let saltHex = "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"

    @Test func theSwiftSnippetSignsWhatTheServerAccepts() throws {
        let path = try ServerSnippets.signing(keyHex: Self.keyHex, saltHex: Self.saltHex)
        #expect(path.hasSuffix("/rs:fit:256:256:0/plain/https%3A%2F%2Fimages.example%2Fcat.jpg"))
        let parsed = try ImageServerPath(parsing: path)
        #expect(try SigningKey(hexKey: Self.keyHex, hexSalt: Self.saltHex).isValid(signature: parsed.signature, forPath: parsed.signedPart))
    }

    /// The README's fenced block of `language` that contains `marker`.
    func block(_ language: String, containing marker: String) throws -> [String] {
        let readme = try String(contentsOf: SnippetsMatchTheDocsTests.root.appendingPathComponent("README.md"), encoding: .utf8)
        var blocks: [[String]] = []
        var current: [String]?
        for line in readme.components(separatedBy: "\n") {
            if current == nil, line == "```\(language)" { current = [] } else if line == "```", let open = current {
                blocks.append(open)
                current = nil
            } else if current != nil { current!.append(line) }
        }
        return try #require(blocks.first { $0.joined(separator: "\n").contains(marker) })
    }

    func run(_ executable: String, _ arguments: [String], path: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [executable] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["IMAGO_KEY"] = Self.keyHex
        environment["IMAGO_SALT"] = Self.saltHex
        environment["path"] = path
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        try process.startTiedToThisProcess()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func thePythonAndShellSnippetsSignLikeTheServer() throws {
        let key = try SigningKey(hexKey: Self.keyHex, hexSalt: Self.saltHex)
        let python = try block("python", containing: "def sign").joined(separator: "\n")
        // The shell snippet without its example path and its curl line.
        let shell = try block("sh", containing: "openssl dgst").filter { !$0.hasPrefix("path=") && !$0.hasPrefix("curl") }
            .joined(separator: "\n") + "\nprintf '%s' \"$signature\""
        for path in ["/rs:fit:256:256/plain/https%3A%2F%2Fimages.example%2Fcat.jpg", "/fill/300/300/no/1/aHR0cDovL2ltZy5leGFtcGxlLmNvbS9wcmV0dHkvaW1hZ2UuanBn.png"] {
            let expected = key.signature(forPath: path)
            #expect(try run("python3", ["-c", python + "\nimport os\nprint(sign(os.environ['path']))"], path: path) == expected)
            #expect(try run("bash", ["-c", shell], path: path) == expected)
        }
        // The imgproxy documentation's vector for the second path.
        #expect(key.signature(forPath: "/fill/300/300/no/1/aHR0cDovL2ltZy5leGFtcGxlLmNvbS9wcmV0dHkvaW1hZ2UuanBn.png") == "_PQ4ytCQMMp-1w1m_vP6g8Qb-Q7yF9mwghf6PddqxLw")
    }
}
