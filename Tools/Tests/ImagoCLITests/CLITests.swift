import ChildProcesses
import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import LoopbackServer
import TerminalRendering
import Testing

/// Bytes appended from one thread and read from another.
final class LockedBytes: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [UInt8] = []
    func append(_ bytes: ArraySlice<UInt8>) { lock.withLock { storage += bytes } }
    var bytes: [UInt8] { lock.withLock { storage } }
}

/// The `imago` binary, run as a user would, against the command-line contract
/// (README.md, "The command-line tool").
@Suite final class CLITests {
    struct Run {
        let status: Int32
        let stdout: String
        let stderr: String
        var lines: [String] { stdout.split(separator: "\n").map(String.init) }
        /// Each stdout line parsed as a JSON object.
        var objects: [[String: Any]] {
            lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        }
    }

    let directory: URL
    let fixtures: URL

    /// Each test's folder goes with it.
    deinit { try? FileManager.default.removeItem(at: directory) }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("imago-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Fixture images, written by the library itself.
        fixtures = directory.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: fixtures, withIntermediateDirectories: true)
        try ImageEncoders.png().encode(TestImages.gradient(width: 40, height: 20)).write(to: fixtures.appendingPathComponent("wide.png"))
        try ImageEncoders.jpeg(quality: 90).encode(TestImages.gradient(width: 300, height: 200)).write(to: fixtures.appendingPathComponent("photo.jpg"))
        try Data("not an image".utf8).write(to: fixtures.appendingPathComponent("notes.png"))
    }

    /// The `imago` binary next to the test bundle.
    static let binary: URL = {
        let running = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return running.deletingLastPathComponent().appendingPathComponent("imago")
    }()

    func imago(_ arguments: String...) async throws -> Run {
        try await imago(arguments)
    }

    /// Runs `imago` to its end (awaited: no thread of the test runner waits for it).
    func imago(_ arguments: [String], environment: [String: String] = [:]) async throws -> Run {
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = directory.appendingPathComponent("stdout-\(UUID().uuidString)")
        let err = directory.appendingPathComponent("stderr-\(UUID().uuidString)")
        try Data().write(to: out)
        try Data().write(to: err)
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try await process.runToExit()
        return Run(
            status: process.terminationStatus,
            stdout: try String(contentsOf: out, encoding: .utf8),
            stderr: try String(contentsOf: err, encoding: .utf8)
        )
    }

    private func path(_ name: String) -> String { fixtures.appendingPathComponent(name).path }

    // MARK: info

    /// A fixture of the codec tests, made by another tool.
    static func codecFixture(_ path: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../Tests/ImagoCodecsTests/Resources/\(path)").standardizedFileURL.path
    }

    @Test func infoAndFetchHandleAVIFHEICJPEGXLAndAPNG() async throws {
        let files = ["avif/rgba8.avif", "heic/orientation6.heic", "jxl/animated.jxl", "apng/offsets.png"].map(Self.codecFixture)
        let info = try await imago(["info", "--json"] + files)
        #expect(info.status == 0, "\(info.stderr)")
        let facts = info.objects.map { "\($0["format"] ?? "") \($0["width"] ?? "")x\($0["height"] ?? "") \($0["frames"] ?? "")" }
        #expect(facts == ["avif 96x64 1", "heic 16x24 1", "jxl 64x48 4", "png 64x48 4"])
        // Written without --format: AVIF stays AVIF, HEIC becomes JPEG, and the animated JPEG XL and APNG
        // animated WebP (the library's one output decision, as the image server). Twice, into the same folder.
        let output = directory.appendingPathComponent("formats")
        for _ in 0..<2 {
            let run = try await imago(["fetch", "--output", output.path, "--json"] + files)
            #expect(run.status == 0, "\(run.stderr)")
        }
        let written = try FileManager.default.contentsOfDirectory(atPath: output.path).sorted()
        #expect(written == ["animated.webp", "offsets.webp", "orientation6.jpg", "rgba8.avif"])
        let avif = try Data(contentsOf: output.appendingPathComponent("rgba8.avif"))
        #expect(try ImageDecoders.info(for: avif).format == .avif)
        let turned = try ImageDecoders.jpeg().decode(try Data(contentsOf: output.appendingPathComponent("orientation6.jpg")))
        #expect((turned.width, turned.height) == (16, 24))
        // --format avif converts, with a quality.
        let converted = try await imago(["fetch", "--output", output.path, "--format", "avif", "--quality", "40", Self.codecFixture("jxl/rgb8-lossy.jxl")])
        #expect(converted.status == 0, "\(converted.stderr)")
        #expect(ImageFormat(sniffing: try Data(contentsOf: output.appendingPathComponent("rgb8-lossy.avif"))) == .avif)
    }

    @Test func infoPrintsOneJSONLinePerSourceWithTheHeaderFacts() async throws {
        let run = try await imago("info", "--json", path("wide.png"), path("photo.jpg"))
        #expect(run.status == 0)
        let objects = run.objects
        #expect(objects.count == 2)
        #expect(objects[0]["source"] as? String == path("wide.png"))
        #expect(objects[0]["ok"] as? Bool == true)
        #expect(objects[0]["format"] as? String == "png")
        #expect(objects[0]["width"] as? Int == 40)
        #expect(objects[0]["height"] as? Int == 20)
        #expect(objects[0]["frames"] as? Int == 1)
        #expect(objects[0]["cache"] as? String == "none")
        #expect(objects[1]["format"] as? String == "jpeg")
        #expect(objects[1]["bytes"] as? Int == (try Data(contentsOf: fixtures.appendingPathComponent("photo.jpg"))).count)
    }

    @Test func infoFailureExitsOneAndNamesTheSourceOnStderr() async throws {
        let run = try await imago("info", "--json", path("wide.png"), path("notes.png"), path("missing.png"))
        #expect(run.status == 1)
        let failures = run.objects.filter { $0["ok"] as? Bool == false }
        #expect(failures.count == 2)
        let codes = failures.compactMap { ($0["error"] as? [String: Any])?["code"] as? String }
        #expect(codes == ["decoding.unsupportedFormat", "loading.fileUnreadable"])
        let errorLines = run.stderr.split(separator: "\n")
        #expect(errorLines.count == 2)
        #expect(errorLines.allSatisfy { $0.hasPrefix("imago: \(fixtures.path)") })
    }

    @Test func infoPlainTextIsOneLinePerSource() async throws {
        let run = try await imago("info", path("wide.png"))
        #expect(run.stdout == "\(path("wide.png")): png 40x20, 1 frame, \(try Data(contentsOf: fixtures.appendingPathComponent("wide.png")).count) bytes\n")
    }

    @Test(arguments: [
        ["info"],
        ["fetch"],
        ["fetch", "x.png", "--quality", "0"],
        ["fetch", "x.png", "--resize", "12"],
        ["fetch", "x.png", "--resize", "10x10", "--max-size", "5"],
        ["fetch", "x.png", "--crop"],
        ["fetch", "x.png", "--format", "gif"],
        ["bench", "decode"],
        ["frobnicate"],
    ])
    func usageErrorsExitTwo(arguments: [String]) async throws {
        let run = try await imago(arguments)
        #expect(run.status == 2, "\(arguments): \(run.stderr)")
        #expect(!run.stderr.isEmpty)
    }

    // MARK: fetch

    @Test func fetchWritesResizedImagesNamedAfterTheirSources() async throws {
        let output = directory.appendingPathComponent("out")
        let run = try await imago("fetch", "--json", "--output", output.path, "--resize", "50x50", "--crop", path("photo.jpg"), path("wide.png"))
        #expect(run.status == 0, "\(run.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: output.path).sorted()
        #expect(files == ["photo.jpg", "wide.png"])
        let photo = try ImageDecoders.all.decode(try Data(contentsOf: output.appendingPathComponent("photo.jpg")))
        #expect(photo.width == 50 && photo.height == 50)
        // A smaller image is not enlarged; crop keeps what fits the box.
        let wide = try ImageDecoders.all.decode(try Data(contentsOf: output.appendingPathComponent("wide.png")))
        #expect(wide.width == 40 && wide.height == 20)
        #expect(run.objects.map { $0["output"] as? String } == [output.appendingPathComponent("photo.jpg").path, output.appendingPathComponent("wide.png").path]
            || run.objects.map { $0["output"] as? String } == [output.appendingPathComponent("wide.png").path, output.appendingPathComponent("photo.jpg").path])
    }

    @Test func fetchConvertsTheFormatAndReadsSourcesFromAFile() async throws {
        let list = directory.appendingPathComponent("list.txt")
        try "# sources\n\(path("photo.jpg"))\n\n\(path("photo.jpg"))\n".write(to: list, atomically: true, encoding: .utf8)
        let output = directory.appendingPathComponent("converted")
        let run = try await imago("fetch", "--input", list.path, "--output", output.path, "--format", "webp", "--quality", "70", "--max-size", "100", "--concurrency", "1")
        #expect(run.status == 0, "\(run.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: output.path).sorted()
        #expect(files == ["photo-2.webp", "photo.webp"])
        let image = try ImageDecoders.all.decode(try Data(contentsOf: output.appendingPathComponent("photo.webp")))
        #expect(image.width == 100 && image.height == 67)
    }

    /// `fetch --resize` and `--max-size` resize with the library's geometry:
    /// a PNG source (whose thumbnail is its full decode resized, to the bit)
    /// gives the pixels of `Image.resized`, as the image server does for the
    /// same box (ImagoServerTests' SamePixelsTests); a JPEG source gives the
    /// decoder's thumbnail.
    @Test(arguments: [
        (["--resize", "64x64"], Thumbnail(width: 64, height: 64)),
        (["--resize", "37x23"], Thumbnail(width: 37, height: 23)),
        (["--resize", "50x50", "--crop"], Thumbnail(width: 50, height: 50, mode: .crop)),
        (["--resize", "37x23", "--crop"], Thumbnail(width: 37, height: 23, mode: .crop)),
        (["--max-size", "45"], Thumbnail(maximumPixelSize: 45)),
    ])
    func fetchGivesTheLibrarysPixels(arguments: [String], thumbnail: Thumbnail) async throws {
        let source = TestImages.gradient(width: 203, height: 117)
        let png = fixtures.appendingPathComponent("source-\(UUID().uuidString).png")
        try ImageEncoders.png().encode(source).write(to: png)
        let output = directory.appendingPathComponent("pixels-\(UUID().uuidString)")
        let run = try await imago(["fetch", "--no-cache", "--output", output.path, "--format", "png"] + arguments + [png.path, path("photo.jpg")])
        #expect(run.status == 0, "\(run.stderr)")
        func written(_ name: String) throws -> Image {
            try ImageDecoders.all.decode(try Data(contentsOf: output.appendingPathComponent(name)))
        }
        let resized = arguments.first == "--max-size"
            ? source.resized(maximumPixelSize: thumbnail.width)
            : source.resized(toFit: thumbnail.width, height: thumbnail.height, mode: thumbnail.mode)
        #expect(try written(png.deletingPathExtension().lastPathComponent + ".png") == resized)
        let jpeg = try Data(contentsOf: fixtures.appendingPathComponent("photo.jpg"))
        #expect(try written("photo.png") == ImageDecoders.all.decode(jpeg, options: ImageDecodingOptions(thumbnail: thumbnail)))
    }

    /// Without --format, the library's policy: the source's format when
    /// Imago writes it, PNG for GIF, JPEG for HEIC and JPEG XL (PNG when
    /// they have alpha), at the library's default qualities.
    @Test func fetchWritesTheFormatTheLibraryChooses() async throws {
        let files = ["heic/rgb8.heic", "heic/rgba8.heic", "jxl/rgb8-lossy.jxl", "jxl/rgba8-lossless.jxl", "gif/pillow-animation.gif",
                     "avif/rgb8-lossy.avif"].map(Self.codecFixture)
        let output = directory.appendingPathComponent("policy")
        let run = try await imago(["fetch", "--no-cache", "--output", output.path] + files + [path("photo.jpg"), path("wide.png")])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try contents(of: output) == [
            "photo.jpg", "pillow-animation.gif", "rgb8-lossy.avif", "rgb8-lossy.jpg", "rgb8.jpg", "rgba8-lossless.png", "rgba8.png", "wide.png",
        ])
        // JPEG at the library's default quality: the bytes `ImageEncoders.encoder(for: .jpeg)` writes.
        let photo = try ImageDecoders.all.decode(try Data(contentsOf: fixtures.appendingPathComponent("photo.jpg")))
        #expect(try Data(contentsOf: output.appendingPathComponent("photo.jpg")) == ImageEncoders.encoder(for: .jpeg)!.encode(photo))
    }

    /// An animated source stays animated in GIF (the default for an
    /// animated GIF) and WebP: every frame, resized, with its duration and
    /// the loop count; PNG (as in imgproxy and the image server) and JPEG
    /// get the first frame.
    @Test func fetchKeepsEveryFrameOfAnAnimationInFormatsThatAnimate() async throws {
        let data = try Data(contentsOf: Self.animatedGIF)
        let source = try ImageDecoders.all.decode(data, options: ImageDecodingOptions(thumbnail: Thumbnail(maximumPixelSize: 40)))
        try #require(source.frames.count > 1)
        for format in ["gif", "webp", "png", "jpeg"] {
            let output = directory.appendingPathComponent("animated-\(format)")
            var arguments = ["fetch", "--no-cache", "--output", output.path, "--max-size", "40", Self.animatedGIF.path]
            if format != "gif" { arguments += ["--format", format] }   // GIF: the default for an animated GIF
            let run = try await imago(arguments)
            #expect(run.status == 0, "\(run.stderr)")
            let written = try ImageDecoders.all.decode(try Data(contentsOf: output.appendingPathComponent("pillow-animation.\(format == "jpeg" ? "jpg" : format)")))
            #expect(written.width == source.width && written.height == source.height, "\(format)")
            guard format != "jpeg" && format != "png" else {
                #expect(written.frames.count == 1)
                continue
            }
            #expect(written.frames.count == source.frames.count, "\(format)")
            #expect(written.frames.map(\.duration) == source.frames.map(\.duration), "\(format)")
            #expect(written.loopCount == source.loopCount, "\(format)")
            if format == "gif" {
                #expect(written.frames.count == source.frames.count, "GIF keeps every frame")
            }
        }
    }

    /// The names in `folder`, hidden temporary files included.
    private func contents(of folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    }

    @Test func fetchIntoTheSameFolderAgainReplacesEveryFileWhole() async throws {
        let output = directory.appendingPathComponent("again")
        for run in 1...3 {
            let result = try await imago("fetch", "--no-cache", "--output", output.path, "--max-size", "100", path("photo.jpg"), path("wide.png"))
            #expect(result.status == 0, "run \(run): \(result.stderr)")
            #expect(try contents(of: output) == ["photo.jpg", "wide.png"], "run \(run)")
            let photo = try ImageDecoders.all.decode(try Data(contentsOf: output.appendingPathComponent("photo.jpg")))
            #expect(photo.width == 100 && photo.height == 67, "run \(run)")
            let wide = try ImageDecoders.all.decode(try Data(contentsOf: output.appendingPathComponent("wide.png")))
            #expect(wide.width == 40 && wide.height == 20, "run \(run)")
        }
    }

    @Test func fetchKeepsTheModeOfAFileItReplaces() async throws {
        let output = directory.appendingPathComponent("mode")
        #expect(try await imago("fetch", "--no-cache", "--output", output.path, path("wide.png")).status == 0)
        let file = output.appendingPathComponent("wide.png")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        #expect(try await imago("fetch", "--no-cache", "--output", output.path, path("wide.png")).status == 0)
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func fetchOverAReadOnlyFileFailsAndLeavesItUntouched() async throws {
        let output = directory.appendingPathComponent("readonly")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        let file = output.appendingPathComponent("wide.png")
        let original = Data("the user's own file".utf8)
        try original.write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: file.path)
        let run = try await imago("fetch", "--no-cache", "--json", "--output", output.path, path("wide.png"), path("photo.jpg"))
        #expect(run.status == 1)
        #expect(try Data(contentsOf: file) == original)
        #expect(try contents(of: output) == ["photo.jpg", "wide.png"])
        let failed = run.objects.first { $0["source"] as? String == path("wide.png") }
        let error = failed?["error"] as? [String: Any]
        #expect(error?["code"] as? String == "output.writeFailed")
        #expect((error?["message"] as? String)?.contains("read-only") == true)
        #expect(run.stderr.contains(path("wide.png")))
    }

    @Test func fetchOntoAFolderOfTheSameNameFailsAndLeavesTheFolder() async throws {
        let output = directory.appendingPathComponent("folder")
        let blocking = output.appendingPathComponent("wide.png")
        try FileManager.default.createDirectory(at: blocking, withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: blocking.appendingPathComponent("inside.txt"))
        let run = try await imago("fetch", "--no-cache", "--json", "--output", output.path, path("wide.png"))
        #expect(run.status == 1)
        let error = run.objects.first?["error"] as? [String: Any]
        #expect(error?["code"] as? String == "output.writeFailed")
        #expect(try contents(of: output) == ["wide.png"])
        #expect(try contents(of: blocking) == ["inside.txt"])
    }

    @Test func fetchOverHTTPReportsEachSourceAndLeavesNoPartialFiles() async throws {
        let png = try ImageEncoders.png().encode(TestImages.gradient(width: 8, height: 8))
        let server = try await LoopbackServer.start(routes: [
            "/art/cover.png": .ok(png, contentType: "image/png"),
            "/art/gone.png": .text("<html>gone</html>", status: 404, contentType: "text/html"),
            "/art/cut.png": ServedResponse.ok(png, contentType: "image/png").delivered(.truncated(afterBytes: 10)),
        ])
        let output = directory.appendingPathComponent("http")
        let run = try await imago("fetch", "--json", "--output", output.path,
                            server.url("/art/cover.png").absoluteString, server.url("/art/gone.png").absoluteString, server.url("/art/cut.png").absoluteString)
        try await server.stop()
        #expect(run.status == 1)
        let bySource = Dictionary(run.objects.map { ($0["source"] as? String ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        #expect(bySource[server.url("/art/cover.png").absoluteString]?["cache"] as? String == "network")
        let gone = bySource[server.url("/art/gone.png").absoluteString]?["error"] as? [String: Any]
        #expect(gone?["code"] as? String == "response.unacceptableContentType")
        let cut = bySource[server.url("/art/cut.png").absoluteString]?["error"] as? [String: Any]
        #expect(cut?["code"] as? String == "loading.connectionLost")
        #expect(try FileManager.default.contentsOfDirectory(atPath: output.path) == ["cover.png"])
    }

    @Test func fetchUsesTheDiskCacheAcrossRunsAndReportsWhereEachImageCameFrom() async throws {
        let png = try ImageEncoders.png().encode(TestImages.gradient(width: 8, height: 8))
        let server = try await LoopbackServer.start(routes: [
            "/fresh.png": ServedResponse(headers: [("Content-Type", "image/png"), ("Cache-Control", "max-age=600")], body: png),
        ])
        let url = server.url("/fresh.png").absoluteString
        let cache = directory.appendingPathComponent("cache")
        let first = try await imago("fetch", "--json", "--cache-dir", cache.path, url)
        let second = try await imago("fetch", "--json", "--cache-dir", cache.path, url)
        let uncached = try await imago("fetch", "--json", "--no-cache", url)
        try await server.stop()
        #expect(first.objects.first?["cache"] as? String == "network")
        #expect(second.objects.first?["cache"] as? String == "disk")
        #expect(second.objects.first?["format"] as? String == "png")
        #expect(second.objects.first?["bytes"] as? Int == png.count)
        #expect(uncached.objects.first?["cache"] as? String == "network")
        #expect(server.requests(for: "/fresh.png").count == 2)
        #expect(try FileManager.default.contentsOfDirectory(atPath: cache.path).filter { $0.hasSuffix(".entry") }.count == 1)
    }

    @Test func twoProcessesSharingOneCacheDirectoryLeaveOnlyCompleteEntries() async throws {
        // 40 distinct images, revalidated on every use (max-age=0 with an ETag),
        // so both processes keep reading and rewriting the same entries.
        var routes: [String: ServedResponse] = [:]
        var bodies: [String: Data] = [:]
        for index in 0..<40 {
            let body = try ImageEncoders.png().encode(TestImages.solid(width: 16 + index, height: 16, red: UInt8(index)))
            bodies["/shared/\(index).png"] = body
            routes["/shared/\(index).png"] = ServedResponse(
                headers: [("Content-Type", "image/png"), ("Cache-Control", "max-age=0"), ("ETag", "\"\(index)\"")], body: body)
        }
        let server = try await LoopbackServer.start(routes: routes)
        let list = directory.appendingPathComponent("shared.txt")
        try bodies.keys.sorted().map { server.url($0).absoluteString }.joined(separator: "\n").write(to: list, atomically: true, encoding: .utf8)
        let cache = directory.appendingPathComponent("shared-cache")
        for _ in 0..<3 {
            let processes = try (0..<2).map { _ -> Process in
                let process = Process()
                process.executableURL = Self.binary
                process.arguments = ["fetch", "--input", list.path, "--cache-dir", cache.path, "--concurrency", "8", "--json"]
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.startTiedToThisProcess()
                return process
            }
            for process in processes {
                await process.exited()
                #expect(process.terminationStatus == 0)
            }
        }
        try await server.stop()
        let reader = DataCache(configuration: .init(directory: cache))
        // The keys the command's pipeline wrote under (these requests carry no credentials).
        let keys = ImagePipeline(configuration: .init())
        for (path, body) in bodies {
            let key = try #require(keys.dataCacheKey(for: ImageRequest(url: server.url(path))))
            #expect(reader.entry(for: key)?.data == body, "\(path)")
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: cache.path)
        #expect(files.count == 40)
        #expect(files.allSatisfy { $0.hasSuffix(".entry") })
    }

    @Test func cacheDirAndNoCacheTogetherAreAUsageError() async throws {
        #expect(try await imago("fetch", "x.png", "--cache-dir", "/tmp/x", "--no-cache").status == 2)
    }

    // MARK: albums

    @Test func albumsShowsTheSampleFeedWithArtworkOffline() async throws {
        // A disk cache of its own: the sample server's port is random, and a port an earlier run
        // (another test's `albums`) used and freed can come round again, so a shared cache would
        // answer some artwork from disk (CI saw "network 4, disk 1").
        let cache = directory.appendingPathComponent("albums-cache-\(UUID().uuidString)")
        let run = try await imago(["albums", "--limit", "5"], environment: ["XDG_CACHE_HOME": cache.path])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.lines
        #expect(lines.count == 6)
        #expect(lines.first == "1. The Paper Kites – Lantern Hours: artwork 170x170")
        #expect(lines.prefix(5).allSatisfy { $0.hasSuffix(": artwork 170x170") })
        #expect(lines.last?.hasPrefix("5 albums, 5 images loaded (network 5, disk 0, memory 0), 0 failed") == true)
    }

    @Test(arguments: [["albums", "--limit", "3"], ["info", "--json"]])
    func aReaderThatQuitsEndsTheCommandQuietly(arguments: [String]) async throws {
        // `imago … | head -1`: once the reader has gone, the next write ends the
        // process as SIGPIPE ends a Unix tool, with no crash report.
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = arguments + (arguments[0] == "info" ? [path("wide.png"), path("photo.jpg")] : [])
        let pipe = Pipe()
        let err = directory.appendingPathComponent("stderr-\(UUID().uuidString)")
        try Data().write(to: err)
        process.standardOutput = pipe
        process.standardError = try FileHandle(forWritingTo: err)
        try pipe.fileHandleForReading.close()
        try await process.runToExit()
        let stderr = try String(contentsOf: err, encoding: .utf8)
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGPIPE, "\(process.terminationReason) \(process.terminationStatus)")
        #expect(!stderr.contains("Fatal error"), "\(stderr.prefix(300))")
    }

    @Test func albumsShowsAnImageErrorOnItsRowAndKeepsTheList() async throws {
        let server = try await LoopbackServer.start()
        server.route("/feed.json", .ok(Data(#"""
            {"feed":{"entry":[
              {"im:name":{"label":"Good"},"im:artist":{"label":"A"},"im:image":[{"label":"\#(server.url("/good.png"))","attributes":{"height":"100"}}]},
              {"im:name":{"label":"Gone"},"im:artist":{"label":"B"},"im:image":[{"label":"\#(server.url("/gone.png"))","attributes":{"height":"100"}}]},
              {"im:name":{"label":"Nameless"},"im:image":[]}
            ]}}
            """#.utf8), contentType: "text/javascript; charset=utf-8"))
        server.route("/good.png", .ok(try ImageEncoders.png().encode(TestImages.solid(width: 4, height: 4)), contentType: "image/png"))
        let run = try await imago("albums", "--feed", server.url("/feed.json").absoluteString)
        try await server.stop()
        #expect(run.status == 1)
        #expect(run.lines.first == "1. A – Good: artwork 4x4")
        #expect(run.lines.dropFirst().first?.hasPrefix("2. B – Gone: error:") == true)
        #expect(run.lines.dropFirst(2).first == "3. (no artist) – Nameless: error: the feed entry has no artist")
        #expect(run.lines.last?.contains("3 albums, 1 images loaded") == true)
        #expect(run.lines.last?.contains("2 failed") == true)
    }

    @Test func albumsWithABrokenFeedFailsWithTheReason() async throws {
        let server = try await LoopbackServer.start(routes: ["/feed.json": .text("<html>down</html>", status: 500, contentType: "text/html")])
        let run = try await imago("albums", "--feed", server.url("/feed.json").absoluteString)
        try await server.stop()
        #expect(run.status == 1)
        #expect(run.stderr.contains("feed.json"))
    }

    // MARK: show

    @Test func showDrawsTheImageWithHalfBlocks() async throws {
        let file = fixtures.appendingPathComponent("quad.png")
        try ImageEncoders.png().encode(Image(width: 2, height: 2, pixelFormat: .rgb8, pixels: [255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255])).write(to: file)
        let run = try await imago(["show", "--width", "2", file.path], environment: ["NO_COLOR": ""])
        #expect(run.status == 0, "\(run.stderr)")
        let esc = "\u{1B}"
        #expect(run.stdout == "\(esc)[38;2;255;0;0m\(esc)[48;2;0;0;255m▀\(esc)[38;2;0;255;0m\(esc)[48;2;255;255;255m▀\(esc)[0m\n")
        #expect(try await imago("show", path("missing.png")).status == 1)
        #expect(try await imago("show", "--width", "0", file.path).status == 2)
    }

    /// The animated GIF of the codec tests (made by Pillow): 4 frames.
    static let animatedGIF = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../../Tests/ImagoCodecsTests/Resources/gif/pillow-animation.gif").standardizedFileURL

    /// Runs `imago` with a pseudo-terminal as stdout for `seconds`, then
    /// interrupts it (SIGINT, as Ctrl-C does) if it still runs; returns its
    /// status and everything it wrote to the terminal.
    func imagoOnATerminal(_ arguments: [String], interruptingAfter seconds: Double) async throws -> (status: Int32, output: String) {
        var master: Int32 = -1, terminal: Int32 = -1
        var size = winsize(ws_row: 40, ws_col: 100, ws_xpixel: 0, ws_ypixel: 0)
        #expect(openpty(&master, &terminal, nil, nil, &size) == 0)
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = arguments
        process.standardOutput = FileHandle(fileDescriptor: terminal, closeOnDealloc: true)
        process.standardError = FileHandle.nullDevice
        try process.startTiedToThisProcess()
        let output = LockedBytes()
        let source = master
        let reader = Thread {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = read(source, &buffer, buffer.count)
                if count <= 0 { return }
                output.append(buffer[0..<count])
            }
        }
        reader.start()
        try await Task.sleep(for: .seconds(seconds))
        if process.isRunning { process.interrupt() }
        await process.exited()
        try await Task.sleep(for: .milliseconds(200))   // the reader takes what is left
        close(master)
        return (process.terminationStatus, String(decoding: output.bytes, as: UTF8.self))
    }

    @Test func showPlaysAnAnimationInPlaceAndCtrlCRestoresTheCursor() async throws {
        let run = try await imagoOnATerminal(["show", "--width", "8", Self.animatedGIF.path], interruptingAfter: 1.5)
        // Then it was interrupted, as a shell reports Ctrl-C, with the cursor hidden while it played and shown at the end
        #expect(run.status == 130)
        #expect(run.output.hasPrefix(TerminalAnimation.hideCursor))
        #expect(run.output.hasSuffix(TerminalAnimation.restoreTerminal))
        // And frames were redrawn in place: the cursor moved up over each previous frame
        let lines = HalfBlockRenderer.lines(for: try ImageDecoders.gif().decode(try Data(contentsOf: Self.animatedGIF),
                                            options: ImageDecodingOptions(frameIndex: 0, maximumPixelSize: 16)), columns: 8).count
        let redraws = run.output.components(separatedBy: "\u{1B}[\(lines)A").count - 1
        #expect(redraws >= 4, "\(redraws) redraws")
        // Piped, only the first frame is drawn, once, and the command ends
        let piped = try await imago(["show", "--width", "8", Self.animatedGIF.path])
        #expect(piped.status == 0)
        #expect(piped.lines.count == lines && !piped.stdout.contains("\u{1B}[?25l"))
    }

    @Test func noColorDrawsShadesWithoutEscapeSequences() async throws {
        let file = fixtures.appendingPathComponent("halves.png")
        // Black on the left, white on the right.
        try ImageEncoders.png().encode(Image(width: 2, height: 2, pixelFormat: .gray8, pixels: [0, 255, 0, 255])).write(to: file)
        let run = try await imago(["show", "--width", "2", file.path], environment: ["NO_COLOR": "1"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == " █\n")
    }

    // MARK: version and errors

    @Test func versionPrintsTheVersionAndExitsZero() async throws {
        let run = try await imago("--version")
        #expect(run.status == 0)
        #expect(run.stdout.range(of: #"^\d+\.\d+\.\d+\n$"#, options: .regularExpression) != nil, "\(run.stdout)")
    }

    @Test func aRefusedConnectionReadsAsOneCleanLine() async throws {
        // A port that refuses connections and that no other test's server
        // can be given meanwhile (a port just freed could be, and answer).
        let closed = try RefusingPort()
        let url = closed.url("/cover.png").absoluteString
        let run = try await imago("info", "--json", url)
        withExtendedLifetime(closed) {}
        #expect(run.status == 1)
        let error = run.objects.first?["error"] as? [String: Any]
        #expect(error?["code"] as? String == "loading.cannotConnect")
        let line = run.stderr.trimmingCharacters(in: .newlines)
        #expect(line == "imago: \(url): cannot connect: connection refused", "\(line)")
    }

    // MARK: bench

    @Test func benchPipelineLoadsEveryImageOnceOverLoopback() async throws {
        let run = try await imago("bench", "pipeline", "--images", "24", "--concurrency", "4", "--json")
        #expect(run.status == 0, "\(run.stderr)")
        let line = try #require(run.objects.first)
        #expect(line["images"] as? Int == 24)
        #expect(line["downloads"] as? Int == 24)
        #expect(line["decodes"] as? Int == 24)
        #expect(line["failures"] as? Int == 0)
        #expect((line["images_per_s"] as? Double ?? 0) > 0)
    }

    /// `--encode` makes the thumbnails an image server would answer; a
    /// `--quality` with nothing to encode is a usage error.
    @Test func benchPipelineEncodesEachThumbnailWhenAsked() async throws {
        let run = try await imago("bench", "pipeline", "--images", "12", "--concurrency", "4", "--encode", "jpeg", "--quality", "80", "--json")
        #expect(run.status == 0, "\(run.stderr)")
        let line = try #require(run.objects.first)
        #expect(line["encode"] as? String == "jpeg")
        #expect(line["decodes"] as? Int == 12)
        #expect(line["failures"] as? Int == 0)
        let misuse = try await imago("bench", "pipeline", "--images", "12", "--quality", "80")
        #expect(misuse.status == 2)
        #expect(misuse.stderr.contains("--encode"))
    }

    @Test func aThousandRequestsForOneURLOverLoopbackShareOneDownloadAndOneDecode() async throws {
        let run = try await imago("bench", "pipeline", "--images", "1000", "--same-url", "--memory-cache", "64", "--json")
        #expect(run.status == 0, "\(run.stderr)")
        let line = try #require(run.objects.first)
        #expect(line["images"] as? Int == 1000)
        #expect(line["downloads"] as? Int == 1)
        #expect(line["decodes"] as? Int == 1)
    }

    @Test func benchPrintsTheContractsJSONLine() async throws {
        let run = try await imago("bench", "thumbnail", "--json", "--iterations", "2", "--max-size", "64", path("photo.jpg"))
        #expect(run.status == 0, "\(run.stderr)")
        let line = try #require(run.objects.first)
        #expect(line["benchmark"] as? String == "thumbnail")
        #expect(line["source"] as? String == path("photo.jpg"))
        #expect(line["iterations"] as? Int == 2)
        #expect((line["median_ms"] as? Double ?? -1) > 0)
        #expect((line["min_ms"] as? Double ?? -1) > 0)
        #expect((line["megapixels_per_s"] as? Double ?? -1) > 0)
        #expect((line["cpu_median_ms"] as? Double ?? -1) >= 0)
        #expect(run.lines.first?.hasPrefix("{\"benchmark\": \"thumbnail\", \"source\":") == true)
    }

    /// `bench operation` times one library operation, twice into the same
    /// `--output`; a canvas too large for memory is refused for that source,
    /// and a read-only output is left as it was.
    @Test func benchOperationTimesAnOperationAndRefusesACanvasTooLarge() async throws {
        let output = directory.appendingPathComponent("operation-\(UUID().uuidString).png")
        for _ in 0..<2 {
            let run = try await imago("bench", "operation", "--operation", "extend", "--json", "--iterations", "2",
                                      "--width", "300", "--height", "300", "--output", output.path, path("photo.jpg"))
            #expect(run.status == 0, "\(run.stderr)")
            let line = try #require(run.objects.first)
            #expect(line["benchmark"] as? String == "operation-extend")
            #expect(line["output_width"] as? Int == 300 && line["output_height"] as? Int == 300)
            #expect(try ImageDecoders.all.decode(Data(contentsOf: output)).width == 300)
        }
        let huge = try await imago("bench", "operation", "--operation", "extend", "--width", "100000", "--height", "100000", path("photo.jpg"))
        #expect(huge.status == 1)
        #expect(huge.stderr.contains("canvas is over 268 megapixels"))
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: output.path)
        let before = try Data(contentsOf: output)
        let readOnly = try await imago("bench", "operation", "--operation", "sharpen", "--iterations", "1", "--output", output.path, path("photo.jpg"))
        #expect(readOnly.status == 1)
        #expect(try Data(contentsOf: output) == before)
    }
}
