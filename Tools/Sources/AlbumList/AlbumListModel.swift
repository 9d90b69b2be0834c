import Foundation
import SharedState
import Imago
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One row of the album list: the album, and what its artwork shows now.
///
/// The row is the ``ImageTarget`` its artwork is loaded into.
public final class AlbumRowModel: ImageTarget {
    /// The album.
    public let album: AlbumFeed.Album
    private let shown = Locked<Image?>(nil)
    private let onChange: @Sendable (AlbumRowModel) -> Void

    init(album: AlbumFeed.Album, onChange: @escaping @Sendable (AlbumRowModel) -> Void) {
        self.album = album
        self.onChange = onChange
    }

    /// The image shown: the placeholder, then the artwork.
    public var artwork: Image? { shown.withLock { $0 } }

    public func display(_ image: Image?) {
        shown.withLock { $0 = image }
        onChange(self)
    }
}

/// The album list: fetches a feed, makes one row per album, and loads each
/// row's artwork through an ``ImageService``.
///
/// App code built the way Imago suggests: it depends on protocols
/// (``DataLoading`` for the feed, ``ImageService`` for artwork), so its tests
/// run on `ImagoTesting` doubles alone.
public final class AlbumListModel: Sendable {
    /// What the list shows.
    public enum State: Sendable {
        case loading
        case loaded([AlbumRowModel])
        case failed(String)
    }

    /// The feed's URL.
    public let feedURL: URL
    /// The placeholder every row shows until its artwork arrives.
    public let placeholder: Image
    private let network: NetworkClient
    private let images: any ImageService
    private let current = Locked<State>(.loading)
    private let onChange: @Sendable (AlbumRowModel) -> Void

    /// Creates the model.
    ///
    /// - Parameters:
    ///   - loader: Loads the feed (JSON is validated: content type, status).
    ///   - images: Loads artwork into the rows.
    ///   - onRowChange: Called whenever a row's artwork changes, on the
    ///     image service's response queue.
    public init(
        feedURL: URL,
        loader: any DataLoading,
        images: any ImageService,
        placeholder: Image,
        onRowChange: @escaping @Sendable (AlbumRowModel) -> Void = { _ in }
    ) {
        self.feedURL = feedURL
        self.network = NetworkClient(loader: loader)
        self.images = images
        self.placeholder = placeholder
        self.onChange = onRowChange
    }

    /// What the list shows now.
    public var state: State { current.withLock { $0 } }

    /// Fetches the feed (at most `limit` albums), makes the rows and starts
    /// loading their artwork. A feed failure is shown as the list's state;
    /// an artwork failure only leaves that row's placeholder.
    @discardableResult
    public func load(limit: Int = .max) async -> State {
        let state: State
        do {
            let feed = try await network.json(AlbumFeed.self, for: URLRequest(url: feedURL))
            let rows = feed.albums.prefix(limit).map { AlbumRowModel(album: $0, onChange: onChange) }
            for row in rows {
                // A broken entry shows its placeholder and its problem; nothing is loaded.
                images.setImage(on: row, from: row.album.problem == nil ? row.album.largestArtworkURL : nil, placeholder: placeholder)
            }
            state = .loaded(Array(rows))
        } catch {
            state = .failed("\(error)")
        }
        current.withLock { $0 = state }
        return state
    }
}
