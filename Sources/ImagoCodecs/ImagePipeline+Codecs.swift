import Imago

extension ImagePipeline.Configuration {
    /// Every codec (``ImageDecoders/all``) and nothing shared: a memory cache
    /// of this configuration's own and no disk cache. Add a ``DataCache`` to
    /// keep downloads on disk.
    public static var withCodecs: ImagePipeline.Configuration {
        ImagePipeline.Configuration(decoder: ImageDecoders.all)
    }
}

extension ImagePipeline {
    /// The process-wide pipeline, for code that does not inject its own:
    /// every codec, ``ImageCache/shared`` in memory and a ``DataCache`` in
    /// ``DataCache/defaultDirectory``. The only pipeline with shared caches.
    public static let shared = ImagePipeline(configuration: ImagePipeline.Configuration(
        dataCache: DataCache(),
        imageCache: ImageCache.shared,
        decoder: ImageDecoders.all
    ))
}
