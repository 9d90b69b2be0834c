import Foundation

/// The smallest thing app code needs to get an image: depend on this, pass
/// ``ImageClient`` in production and `ImagoTesting`'s `MockImageLoader` in tests.
///
/// ```swift
/// final class AlbumViewModel {
///     private let images: any ImageLoading
///     init(images: any ImageLoading = ImageClient.shared) { self.images = images }
/// }
/// ```
public protocol ImageLoading: Sendable {
    /// Loads the image at `url`.
    func image(from url: URL) async throws -> Image
}

/// Something that can be cancelled.
public protocol Cancellable: Sendable {
    /// Cancels; calling it again has no effect.
    func cancel()
}

extension ImageTask: Cancellable {}

/// Where an image is shown: a view, a list cell, a terminal row.
///
/// ``ImageClient`` calls ``display(_:)`` on its response queue; a target
/// used from one thread only can rely on that queue being that thread.
public protocol ImageTarget: AnyObject, Sendable {
    /// Shows `image`, or nothing when `nil`.
    func display(_ image: Image?)
}

/// The image client's operations: what app code calls to load images and
/// put them on targets. ``ImageClient`` implements it; `ImagoTesting`'s
/// `MockImageService` records every call.
public protocol ImageService: ImageLoading {
    /// Loads the image at `url` and calls `completion` with it.
    ///
    /// - Returns: The task, or `nil` when the image was in the memory cache:
    ///   then `completion` has already run, synchronously, and no task exists.
    @discardableResult
    func downloadImage(from url: URL, completion: @escaping @Sendable (Result<Image, any Error>) -> Void) -> (any Cancellable)?

    /// Shows the image at `url` on `target`, with `placeholder` until it arrives.
    ///
    /// Cancels the display already running for `target`, so a reused target
    /// (a list cell) never shows the image of its previous URL. A `nil` URL
    /// cancels and shows the placeholder (nothing when `nil`). An image in
    /// the memory cache is shown before this returns, with no placeholder.
    ///
    /// - Returns: The display: `await display.finished()` to know what the
    ///   target ends up showing.
    @discardableResult
    func setImage(on target: any ImageTarget, from url: URL?, placeholder: Image?) -> ImageDisplayTask

    /// The display in flight for `target`: the last ``setImage(on:from:placeholder:)``
    /// for it, while it loads; `nil` once it has finished or when there was none.
    func displayTask(for target: any ImageTarget) -> ImageDisplayTask?
}
