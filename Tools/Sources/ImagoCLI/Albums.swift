import AlbumList
import ArgumentParser
import CommandLineSupport
import Foundation
import SharedState
import Imago
import ImagoCodecs
import SampleServer
import TerminalRendering

/// `imago albums [--feed URL] [--limit N]`: the album-list demo.
struct Albums: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show an album list with artwork, loaded through ImageClient.setImage.",
        discussion: """
        Without --feed, a sample server on a free loopback port serves a feed and generated \
        artwork, so the demo needs no network. --feed takes any feed of the iTunes \
        top-albums JSON shape.
        """
    )

    @Option(help: "A feed URL (iTunes top-albums JSON shape). Default: the built-in sample server.")
    var feed: String?

    @Option(help: "Show at most N albums.")
    var limit: Int = 10

    func validate() throws {
        if limit < 1 { throw ValidationError("--limit must be at least 1.") }
    }

    func run() async throws {
        let started = ContinuousClock.now
        let sample = feed == nil ? try await SampleAlbumServer.start() : nil
        let feedURL = try feed.map { text -> URL in
            guard let url = URL(string: text), url.scheme != nil else { throw ValidationError("--feed takes a URL.") }
            return url
        } ?? sample!.feedURL

        let disk = CountingDataCache(DataCache())
        let pipeline = ImagePipeline(configuration: .init(dataCache: disk, imageCache: ImageCache(), decoder: ImageDecoders.all))
        let failures = Locked<[String]>([])
        let client = ImageClient(pipeline: pipeline, responseQueue: nil) { line in failures.withLock { $0.append(line) } }
        let placeholder = Image(width: 8, height: 8, pixelFormat: .rgb8, pixels: [UInt8](repeating: 60, count: 8 * 8 * 3))
        let view = AlbumListView(placeholder: placeholder, failures: failures)
        let model = AlbumListModel(feedURL: feedURL, loader: DataLoader.shared, images: client, placeholder: placeholder) { _ in
            view.redraw()
        }
        let state = await model.load(limit: limit)
        guard case .loaded(let rows) = state else {
            if case .failed(let message) = state { Output.error("imago: \(feedURL.absoluteString): \(message)") }
            try? await sample?.stop()
            throw ExitCode(1)
        }
        view.show(rows)
        // Wait until every row has its artwork or its error (at most a minute).
        for _ in 0..<3_000 where !view.isComplete {
            try await Task.sleep(for: .milliseconds(20))
        }
        view.finish()
        let loaded = view.loadedCount, failed = view.failedCount
        let seconds = (ContinuousClock.now - started).milliseconds / 1_000
        let fromDisk = min(disk.hits, loaded)
        Output.line(String(format: "%d albums, %d images loaded (network %d, disk %d, memory 0), %d failed, %.2f s",
                           rows.count, loaded, loaded - fromDisk, fromDisk, failed, seconds))
        try? await sample?.stop()
        if failed > 0 { throw ExitCode(1) }
    }
}

/// Draws the rows: on a terminal, artwork as half-block pictures beside the
/// names, redrawn as images arrive; elsewhere, one plain line per album at the end.
final class AlbumListView: @unchecked Sendable {
    // @unchecked Sendable: every field is guarded by `lock`.
    private let lock = NSLock()
    private let placeholder: Image
    private let failures: Locked<[String]>
    private let isTerminal = Output.stdoutIsTerminal
    private var rows: [AlbumRowModel] = []
    private var drawnLines = 0
    private var drawsProgressively = false
    private static let artColumns = 8

    init(placeholder: Image, failures: Locked<[String]>) {
        self.placeholder = placeholder
        self.failures = failures
    }

    func show(_ rows: [AlbumRowModel]) {
        lock.withLock {
            self.rows = rows
            // Redrawing in place needs the whole list on screen.
            drawsProgressively = isTerminal && rows.count * 4 + 2 < HalfBlockRenderer.terminalRows
        }
        redraw()
    }

    func redraw() {
        lock.withLock {
            guard drawsProgressively, !rows.isEmpty else { return }
            drawLocked()
        }
    }

    func finish() {
        lock.withLock {
            if isTerminal {
                drawLocked()
            } else {
                for (index, row) in rows.enumerated() {
                    Output.line("\(index + 1). \(row.album.artist) – \(row.album.name): \(status(of: row))")
                }
            }
        }
    }

    var isComplete: Bool { lock.withLock { rows.allSatisfy { isLoaded($0) || error(of: $0) != nil } } }
    var loadedCount: Int { lock.withLock { rows.filter(isLoaded).count } }
    var failedCount: Int { lock.withLock { rows.filter { !isLoaded($0) && error(of: $0) != nil }.count } }

    private func isLoaded(_ row: AlbumRowModel) -> Bool {
        guard let artwork = row.artwork else { return false }
        return artwork != placeholder
    }

    private func error(of row: AlbumRowModel) -> String? {
        if let problem = row.album.problem { return problem }
        guard let url = row.album.largestArtworkURL?.absoluteString else { return "no artwork in the feed" }
        return failures.withLock { $0.first { $0.hasPrefix(url) } }.map { String($0.dropFirst(url.count + 2)) }
    }

    private func status(of row: AlbumRowModel) -> String {
        if isLoaded(row), let artwork = row.artwork { return "artwork \(artwork.width)x\(artwork.height)" }
        if let error = error(of: row) { return "error: \(error)" }
        return "loading…"
    }

    private func drawLocked() {
        var text = drawnLines > 0 ? "\u{1B}[\(drawnLines)F" : ""
        var count = 0
        for row in rows {
            let colour = Output.colorEnabled
            let art = HalfBlockRenderer.lines(for: row.artwork ?? placeholder, columns: Self.artColumns, colour: colour)
            let words = colour
                ? ["\u{1B}[1m\(row.album.artist)\u{1B}[0m", row.album.name, "\u{1B}[2m\(status(of: row))\u{1B}[0m"]
                : [row.album.artist, row.album.name, status(of: row)]
            for index in 0..<max(art.count, words.count) {
                let picture = index < art.count ? art[index] : String(repeating: " ", count: Self.artColumns)
                text += "\u{1B}[2K" + picture + "  " + (index < words.count ? words[index] : "") + "\n"
                count += 1
            }
        }
        drawnLines = count
        Output.raw(text)
    }
}

/// A ``DataCaching`` that counts the entries it finds, to report disk hits.
final class CountingDataCache: DataCaching {
    private let base: any DataCaching
    private let found = Locked(0)

    init(_ base: any DataCaching) {
        self.base = base
    }

    var hits: Int { found.withLock { $0 } }

    func entry(for key: String) -> DataCacheEntry? {
        let entry = base.entry(for: key)
        if entry != nil { found.withLock { $0 += 1 } }
        return entry
    }

    func store(_ entry: DataCacheEntry, for key: String) { base.store(entry, for: key) }
    func removeEntry(for key: String) { base.removeEntry(for: key) }
    func removeAll() { base.removeAll() }
}
