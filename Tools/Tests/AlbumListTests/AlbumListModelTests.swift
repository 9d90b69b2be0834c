import AlbumList
import Foundation
import Imago
import ImagoTesting
import Testing

/// An example of what a user of Imago writes: tests of their own list
/// view-model, with no network, no disk and no codec, using only ImagoTesting.
@Suite(.timeLimit(.minutes(1))) struct AlbumListModelTests {
    let feedURL = URL(string: "https://itunes.example/top-albums.json")!
    let loader = MockDataLoader()
    let queue = ManualQueue()
    let images: MockImageService
    let placeholder = TestImages.solid(width: 1, height: 1, red: 0, green: 0, blue: 0)
    let blue = TestImages.solid(width: 4, height: 4, red: 10, green: 20, blue: 200)

    init() {
        images = MockImageService(queue: queue)
    }

    private func feed(_ albums: [(name: String?, artist: String?, images: [(String, Int)])]) -> Data {
        let entries = albums.map { album -> [String: Any] in
            var entry: [String: Any] = [:]
            if let name = album.name { entry["im:name"] = ["label": name] }
            if let artist = album.artist { entry["im:artist"] = ["label": artist] }
            entry["im:image"] = album.images.map { ["label": $0.0, "attributes": ["height": String($0.1)]] }
            return entry
        }
        return try! JSONSerialization.data(withJSONObject: ["feed": ["entry": entries]])
    }

    private func model() -> AlbumListModel {
        AlbumListModel(feedURL: feedURL, loader: loader, images: images, placeholder: placeholder)
    }

    private func rows(_ state: AlbumListModel.State) -> [AlbumRowModel] {
        if case .loaded(let rows) = state { return rows }
        return []
    }

    @Test func parsesTheFeedAndPicksTheLargestArtwork() async throws {
        loader.stub(feedURL, .json(feed([
            (name: "Blue", artist: "Joni Mitchell", images: [("https://a.example/170.jpg", 170), ("https://a.example/55.jpg", 55)]),
        ])))
        let rows = rows(await model().load())
        #expect(rows.map(\.album.name) == ["Blue"])
        #expect(rows.first?.album.largestArtworkURL == URL(string: "https://a.example/170.jpg"))
    }

    @Test func entriesMissingANameOrArtistBecomeRowsThatShowTheProblem() async {
        loader.stub(feedURL, .json(feed([
            (name: nil, artist: "Nobody", images: [("https://a.example/x.jpg", 100)]),
            (name: "Hejira", artist: nil, images: []),
            (name: "Court and Spark", artist: "Joni Mitchell", images: []),
        ])))
        let rows = rows(await model().load())
        #expect(rows.map(\.album.problem) == ["the feed entry has no name", "the feed entry has no artist", nil])
        #expect(rows[0].artwork == placeholder)
        // Nothing is loaded for a broken entry.
        #expect(images.setImageCalls.first?.url == nil)
    }

    @Test func wrongContentTypeOrServerErrorFailsTheList() async {
        loader.stub(feedURL, .data(Data("<html></html>".utf8), contentType: "text/html"))
        guard case .failed(let message) = await model().load() else {
            Issue.record("expected a failure")
            return
        }
        #expect(message.contains("unacceptable content type"))
        loader.stub(feedURL, .json(Data("{}".utf8), statusCode: 500))
        guard case .failed(let status) = await model().load() else {
            Issue.record("expected a failure")
            return
        }
        #expect(status.contains("500"))
    }

    @Test func eachRowShowsThePlaceholderFirstThenItsArtwork() async {
        let art = URL(string: "https://a.example/blue.jpg")!
        images.stub(art, .success(blue))
        loader.stub(feedURL, .json(feed([(name: "Blue", artist: "Joni Mitchell", images: [(art.absoluteString, 170)])])))
        let row = rows(await model().load())[0]
        #expect(row.artwork == placeholder)
        #expect(images.setImageCalls.map(\.url) == [art])
        // The artwork is loaded and waits on the (main) queue: nothing to wait for.
        let display = images.displayTask(for: row)
        #expect(display?.url == art)
        #expect(queue.pendingCount == 1)
        queue.runAll()
        #expect(row.artwork == blue)
        #expect(display?.outcome?.image == blue)
    }

    @Test func aFailedArtworkKeepsThePlaceholderAndTheRestLoad() async {
        let broken = URL(string: "https://a.example/broken.jpg")!
        let good = URL(string: "https://a.example/good.jpg")!
        images.stub(broken, .failure(URLError(.badServerResponse)))
        images.stub(good, .success(blue))
        loader.stub(feedURL, .json(feed([
            (name: "One", artist: "A", images: [(broken.absoluteString, 100)]),
            (name: "Two", artist: "B", images: [(good.absoluteString, 100)]),
        ])))
        let rows = rows(await model().load())
        let displays = rows.map { images.displayTask(for: $0) }
        #expect(queue.pendingCount == 2)
        queue.runAll()
        #expect(rows[0].artwork == placeholder)
        #expect(rows[1].artwork == blue)
        #expect(displays[0]?.outcome?.error != nil)
        #expect(displays[1]?.outcome?.image == blue)
        #expect(images.loggedFailures.count == 1)
    }

    @Test func theLimitCapsTheRows() async {
        loader.stub(feedURL, .json(feed((0..<10).map { (name: "Album \($0)", artist: "Artist", images: []) })))
        #expect(rows(await model().load(limit: 3)).count == 3)
    }
}

/// The feed as iTunes really serves it: `text/javascript`, every field of an
/// entry around the three the demo reads, and a lone entry as an object.
@Suite struct RealFeedShapeTests {
    let feedURL = URL(string: "https://itunes.apple.com/us/rss/topalbums/limit=100/json")!

    static func entry(id: String, name: String, artist: String) -> String {
        """
        {"im:name":{"label":"\(name)"},
         "im:image":[{"label":"https://is1.example/\(id)/55x55bb.png","attributes":{"height":"55"}},
                     {"label":"https://is1.example/\(id)/170x170bb.png","attributes":{"height":"170"}},
                     {"label":"https://is1.example/\(id)/60x60bb.png","attributes":{"height":"60"}}],
         "im:itemCount":{"label":"12"},
         "im:price":{"label":"$10.99","attributes":{"amount":"10.99","currency":"USD"}},
         "im:contentType":{"im:contentType":{"attributes":{"term":"Album","label":"Album"}},"attributes":{"term":"Music","label":"Music"}},
         "rights":{"label":"\\u2117 2026 Records"},
         "title":{"label":"\(name) - \(artist)"},
         "link":{"attributes":{"rel":"alternate","type":"text/html","href":"https://music.example/album/\(id)?uo=2"}},
         "id":{"label":"https://music.example/album/\(id)?uo=2","attributes":{"im:id":"\(id)"}},
         "im:artist":{"label":"\(artist)","attributes":{"href":"https://music.example/artist/1?uo=2"}},
         "category":{"attributes":{"im:id":"14","term":"Pop","scheme":"https://music.example/genre/14?uo=2","label":"Pop"}},
         "im:releaseDate":{"label":"2026-07-24T00:00:00-07:00","attributes":{"label":"July 24, 2026"}}}
        """
    }

    static func feed(entries: String) -> Data {
        Data("""
        {"feed":{"author":{"name":{"label":"iTunes Store"},"uri":{"label":"http://www.apple.com/itunes/"}},
         "entry":\(entries),
         "updated":{"label":"2026-11-23T02:00:00-07:00"},"rights":{"label":"Copyright 2008 Apple Inc."},
         "title":{"label":"iTunes Store: Top Albums"},"icon":{"label":"http://itunes.apple.com/favicon.ico"},
         "link":[{"attributes":{"rel":"alternate","type":"text/html","href":"https://music.example/"}},
                 {"attributes":{"rel":"self","href":"https://itunes.apple.com/us/rss/topalbums/limit=100/json"}}],
         "id":{"label":"https://itunes.apple.com/us/rss/topalbums/limit=100/json"}}}
        """.utf8)
    }

    func load(_ body: Data, contentType: String = "text/javascript; charset=utf-8") async -> AlbumListModel.State {
        let loader = MockDataLoader()
        loader.stub(feedURL, .data(body, contentType: contentType))
        let model = AlbumListModel(feedURL: feedURL, loader: loader, images: MockImageService(), placeholder: TestImages.solid(width: 1, height: 1))
        return await model.load()
    }

    @Test func readsTheRealFeedServedAsJavaScript() async {
        let body = Self.feed(entries: "[\(Self.entry(id: "1", name: "Blue", artist: "Joni Mitchell")),\(Self.entry(id: "2", name: "Hejira", artist: "Joni Mitchell"))]")
        guard case .loaded(let rows) = await load(body) else {
            Issue.record("the feed did not load")
            return
        }
        #expect(rows.map(\.album.name) == ["Blue", "Hejira"])
        #expect(rows.map(\.album.problem) == [nil, nil])
        #expect(rows[0].album.largestArtworkURL == URL(string: "https://is1.example/1/170x170bb.png"))
        #expect(rows[0].album.artworkURLs.count == 3)
    }

    @Test func aLoneEntryObjectIsOneAlbum() async {
        guard case .loaded(let rows) = await load(Self.feed(entries: Self.entry(id: "7", name: "Court and Spark", artist: "Joni Mitchell"))) else {
            Issue.record("the feed did not load")
            return
        }
        #expect(rows.map(\.album.name) == ["Court and Spark"])
    }

    @Test func theSameFeedServedAsHTMLIsRejected() async {
        let body = Self.feed(entries: "[\(Self.entry(id: "1", name: "Blue", artist: "Joni Mitchell"))]")
        guard case .failed(let message) = await load(body, contentType: "text/html; charset=utf-8") else {
            Issue.record("an HTML response was accepted as the feed")
            return
        }
        #expect(message.contains("content type"))
    }
}
