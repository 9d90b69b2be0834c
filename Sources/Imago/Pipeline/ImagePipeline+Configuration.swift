import CoreMetrics
import Foundation
import Logging

extension ImagePipeline {
    /// Everything the pipeline uses, each with a production default.
    ///
    /// The core has no codecs: `ImagoCodecs` provides
    /// `ImagePipeline.Configuration.withCodecs` with a decoder for every format.
    ///
    /// Nothing is shared by default: each configuration made with `init`
    /// has its own memory cache and no disk cache, so two pipelines (two
    /// tests running in parallel) never see each other's images. Only
    /// `ImagePipeline.shared` (ImagoCodecs) uses the process-wide
    /// ``ImageCache/shared`` and a ``DataCache`` on disk. Pipelines made from
    /// the same configuration value share its caches.
    public struct Configuration: Sendable {
        /// Loads the bytes. Default: ``DataLoader/shared``.
        public var dataLoader: any DataLoading
        /// The disk stage; `nil` skips it. Default: `nil` (only
        /// `ImagePipeline.shared` has a ``DataCache``).
        public var dataCache: (any DataCaching)?
        /// The memory stage; `nil` skips it. Default: a new ``ImageCache``
        /// of this configuration's own.
        public var imageCache: (any ImageCaching)?
        /// Decodes the bytes. Default: an empty registry (no codecs).
        public var decoder: any ImageDecoding
        /// Which content types responses may have. Default: ``AcceptedContentTypes/images``.
        public var acceptedContentTypes: AcceptedContentTypes
        /// The decoding limits (pixel and frame counts) applied to every image.
        public var decodingOptions: ImageDecodingOptions
        /// How many downloads run at once. Default: 6.
        public var maximumConcurrentDownloads: Int
        /// How many decodes run at once. Default: the number of cores.
        public var maximumConcurrentDecodes: Int
        /// How many processor runs happen at once. Default: the number of cores.
        public var maximumConcurrentProcessing: Int
        /// Header fields that carry credentials, beside `Authorization`,
        /// `Cookie` and `Proxy-Authorization` (always): requests whose values
        /// for any of them differ never share a download, a disk-cache entry
        /// or a memory-cache entry. Names are case-insensitive. Default: none.
        ///
        /// To share the image of a private URL across credentials on
        /// purpose, give the requests the same ``ImageRequest/imageID``.
        public var additionalCredentialHeaders: Set<String>
        /// The clock for HTTP freshness (`max-age`, `Expires`). Default: ``TimeSource/system``.
        public var time: TimeSource
        /// Where CPU work (decoding, processing) runs. Default: a global queue.
        public var workQueue: any Dispatching
        /// Where the pipeline logs each load (`debug`) and each failure
        /// (`info`), with the URL in the metadata. Default: a logger that
        /// drops everything; pass your application's.
        public var logger: Logger
        /// Where the pipeline's metrics go (images by source, bytes loaded,
        /// decode time by format, failures by code). `nil` (the default):
        /// the process-wide `MetricsSystem`, a no-op until the application
        /// bootstraps a backend.
        public var metricsFactory: (any MetricsFactory)?

        /// Creates a configuration.
        public init(
            dataLoader: any DataLoading = DataLoader.shared,
            dataCache: (any DataCaching)? = nil,
            imageCache: (any ImageCaching)? = ImageCache(),
            decoder: any ImageDecoding = ImageDecoderRegistry(),
            acceptedContentTypes: AcceptedContentTypes = .images,
            decodingOptions: ImageDecodingOptions = ImageDecodingOptions(),
            maximumConcurrentDownloads: Int = 6,
            maximumConcurrentDecodes: Int = ProcessInfo.processInfo.activeProcessorCount,
            maximumConcurrentProcessing: Int = ProcessInfo.processInfo.activeProcessorCount,
            additionalCredentialHeaders: Set<String> = [],
            time: TimeSource = .system,
            workQueue: any Dispatching = DispatchQueue.global(qos: .userInitiated),
            logger: Logger = .disabled,
            metricsFactory: (any MetricsFactory)? = nil
        ) {
            self.dataLoader = dataLoader
            self.dataCache = dataCache
            self.imageCache = imageCache
            self.decoder = decoder
            self.acceptedContentTypes = acceptedContentTypes
            self.decodingOptions = decodingOptions
            self.maximumConcurrentDownloads = maximumConcurrentDownloads
            self.maximumConcurrentDecodes = maximumConcurrentDecodes
            self.maximumConcurrentProcessing = maximumConcurrentProcessing
            self.additionalCredentialHeaders = additionalCredentialHeaders
            self.time = time
            self.workQueue = workQueue
            self.logger = logger
            self.metricsFactory = metricsFactory
        }
    }
}
