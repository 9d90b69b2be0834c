import Foundation

/// The memory-cache stage: the first place a request looks, and the one
/// place the pipeline writes the memory cache.
struct MemoryCacheStage: Sendable {
    let cache: (any ImageCaching)?

    /// The final image for `request`, if the memory cache has it and the
    /// request may read it.
    func cachedImage(for request: IdentifiedRequest) -> Image? {
        guard request.request.cachePolicy != .reloadIgnoringCaches else { return nil }
        return cache?.image(for: request.cacheKey)
    }

    /// Keeps the image a job produced when it is the final image of the
    /// request that started the job (the last processor's output, or the
    /// decoded image when there are no processors); the images of earlier
    /// steps are not kept. The image stages' runners call it once per job.
    func keep(_ produced: DecodedImage, key: some ImageIdentity, request: IdentifiedRequest) {
        guard let cache else { return }
        let cacheKey = request.cacheKey
        guard key.cacheKey == cacheKey else { return }
        cache.store(produced.image, for: cacheKey)
    }

    /// Keeps a request's final image when its job did not: a request that
    /// joined a job another request started (a plain request joining the
    /// decode of a processed one) is the only one that knows the job's
    /// output is its final image. In the common case ``keep(_:key:request:)``
    /// has stored it before delivery, and this is one lookup.
    func keepIfMissing(_ image: Image, for request: IdentifiedRequest) {
        guard let cache else { return }
        let cacheKey = request.cacheKey
        if cache.image(for: cacheKey) == nil { cache.store(image, for: cacheKey) }
    }
}
