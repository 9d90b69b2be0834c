import Foundation

/// An album feed in the iTunes top-albums JSON shape:
/// `{"feed": {"entry": [{"im:name": {"label": ...}, "im:artist": {"label": ...},
/// "im:image": [{"label": URL, "attributes": {"height": "55"}}, ...]}]}}`,
/// with the feed's other fields (`id`, `im:price`, `category`, `link`, ...)
/// ignored. A feed of one album, which iTunes sends as a lone `entry`
/// object rather than an array, reads as one album.
public struct AlbumFeed: Decodable, Sendable, Equatable {
    /// One album.
    public struct Album: Sendable, Equatable {
        /// The album's name.
        public var name: String
        /// The artist.
        public var artist: String
        /// Artwork URLs, smallest first.
        public var artworkURLs: [URL]
        /// What is wrong with the feed's entry, if anything (shown on its row).
        public var problem: String?

        /// Creates an album.
        public init(name: String, artist: String, artworkURLs: [URL], problem: String? = nil) {
            self.name = name
            self.artist = artist
            self.artworkURLs = artworkURLs
            self.problem = problem
        }

        /// The largest artwork, the one rows load and scale down.
        public var largestArtworkURL: URL? { artworkURLs.last }
    }

    /// The albums, in feed order. An entry without a name or an artist is
    /// kept, with a ``Album/problem`` saying so, so its row can show it.
    public var albums: [Album]

    /// Creates a feed.
    public init(albums: [Album]) {
        self.albums = albums
    }

    private struct Label: Decodable { let label: String }
    private struct ImageEntry: Decodable {
        struct Attributes: Decodable { let height: String? }
        let label: String
        let attributes: Attributes?
    }
    private struct Entry: Decodable {
        let name: Label?
        let artist: Label?
        let images: [ImageEntry]?
        enum CodingKeys: String, CodingKey {
            case name = "im:name"
            case artist = "im:artist"
            case images = "im:image"
        }
    }
    private struct Feed: Decodable {
        let entry: [Entry]?
        enum CodingKeys: String, CodingKey { case entry }

        // The iTunes feed sends a lone entry as an object, not a one-element array.
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if let single = try? container.decode(Entry.self, forKey: .entry) {
                entry = [single]
            } else {
                entry = try container.decodeIfPresent([Entry].self, forKey: .entry)
            }
        }
    }
    private enum CodingKeys: String, CodingKey { case feed }

    public init(from decoder: any Decoder) throws {
        let feed = try decoder.container(keyedBy: CodingKeys.self).decode(Feed.self, forKey: .feed)
        albums = (feed.entry ?? []).map { entry in
            let problem: String? = switch (entry.name?.label, entry.artist?.label) {
            case (nil, nil): "the feed entry has no name and no artist"
            case (nil, _): "the feed entry has no name"
            case (_, nil): "the feed entry has no artist"
            default: nil
            }
            let images = (entry.images ?? [])
                .compactMap { image in URL(string: image.label).map { (url: $0, height: Int(image.attributes?.height ?? "") ?? 0) } }
                .sorted { $0.height < $1.height }
            return Album(name: entry.name?.label ?? "(no name)", artist: entry.artist?.label ?? "(no artist)",
                         artworkURLs: images.map(\.url), problem: problem)
        }
    }
}
