import Imago

extension ImagePipeline.Configuration {
    /// The one-line default: every codec (``ImageDecoders/all``), the shared
    /// memory cache and a ``DataCache`` in the default cache directory.
    public static var withCodecs: ImagePipeline.Configuration {
        ImagePipeline.Configuration(dataCache: DataCache(), decoder: ImageDecoders.all)
    }
}

extension ImagePipeline {
    /// A pipeline with every codec and both caches, for code that does not
    /// inject its own.
    public static let shared = ImagePipeline(configuration: .withCodecs)
}
