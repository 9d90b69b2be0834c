#if Server
/// The names of the spans the image server opens (swift-distributed-tracing;
/// no-ops until an application bootstraps a tracer). Each image request is
/// a server span named after its method and route (`GET /**`); these are
/// its children, each around the work itself (the wait for a worker comes
/// before it).
enum SpanName {
    /// The result store read, when there is a store (`imago.result_store.result`: hit, miss (none, or older than the TTL), read_failed).
    static let storeLookup = "store.lookup"
    /// The source's bytes: the disk cache or the loader, with the checks of
    /// the response (`imago.source.layer`, `imago.source.bytes`). An HTTP
    /// or S3 load is a client span below it.
    static let sourceFetch = "source.fetch"
    /// The source decoded to pixels.
    static let decode = "decode"
    /// The options applied to the pixels: resize, crop, effects, watermark.
    static let process = "process"
    /// The pixels encoded, with the metadata kept (`imago.format`).
    static let encode = "encode"
    /// An animation decoded, processed and encoded frame by frame.
    static let animate = "animate"
    /// An SVG source sanitised, answered as SVG.
    static let sanitizeSVG = "svg.sanitize"
    /// The render written to the result store, after the answer.
    static let storeWrite = "store.write"
}
#endif
