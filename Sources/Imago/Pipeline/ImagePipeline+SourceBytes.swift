import Foundation

/// A source's bytes as the data stage gives them (``ImagePipeline/sourceBytes(for:)``).
package struct SourceBytes: Sendable {
    /// The bytes.
    package var data: Data
    /// Where they came from.
    package var source: ImageResponse.Source
    /// How long reading the disk cache or loading took.
    package var duration: TimeInterval
    /// What the source's response said about caching them.
    package var cacheHeaders: SourceCacheHeaders

    package init(data: Data, source: ImageResponse.Source, duration: TimeInterval, cacheHeaders: SourceCacheHeaders = SourceCacheHeaders()) {
        (self.data, self.source, self.duration, self.cacheHeaders) = (data, source, duration, cacheHeaders)
    }
}

extension ImagePipeline {
    /// The bytes of `request`'s source, through the data stage (the disk
    /// cache, then the loader, with the response checks), shared with
    /// identical loads in flight; no decode.
    ///
    /// For a caller that looks at the bytes before it decides to decode
    /// (the image server's `skip_processing`), then decodes them with
    /// ``decode(_:for:)``.
    ///
    /// - Throws: ``ImagePipelineError``, as ``image(for:)`` does before decoding.
    package func sourceBytes(for request: ImageRequest) async throws -> SourceBytes {
        guard let identified = identify(request) else { throw ImagePipelineError(.invalidRequest, url: nil) }
        let fetched = try await dataStage.data(for: identified, subscription: JobSubscription(priority: request.priority))
        return SourceBytes(data: fetched.data, source: fetched.source, duration: fetched.duration, cacheHeaders: fetched.cacheHeaders)
    }

    /// Decodes bytes as the decode stage does for `request`: the
    /// configured decoder and limits, and the request's thumbnail, then
    /// whatever `adjust` changes (a colour management, a pixel limit). Like the
    /// stage, it records the decode's duration
    /// (`imago_pipeline_decode_duration`), and bytes that do not decode are
    /// removed from the disk cache, so the next request downloads them again
    /// (not when the decode was stopped: a passed ``WorkDeadline`` or a
    /// cancelled task says nothing about the bytes).
    ///
    /// - Throws: ``ImagePipelineError`` (``ImagePipelineError/Code/decodingFailed``).
    package func decode(_ data: Data, for request: ImageRequest,
                        adjusting adjust: (inout ImageDecodingOptions) -> Void = { _ in }) throws -> Image {
        var options = configuration.decodingOptions
        options.thumbnail = request.thumbnail
        adjust(&options)
        let started = Stopwatch.now()
        do {
            let image = try DecodeStage.decode(data, with: configuration.decoder, options: options)
            instruments.decoded(ImageFormat(sniffing: data), seconds: Stopwatch.seconds(since: started))
            return image
        } catch let stopped as WorkDeadlineExceeded {
            throw stopped
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            discardUndecodableBytes(for: request)
            throw ImagePipelineError(.decodingFailed, url: request.url, underlying: error)
        }
    }

    /// Removes `request`'s bytes from the disk cache, for a caller that
    /// decoded them on its own (the image server's animations, a frame at a
    /// time) and found they do not decode: the next request downloads them again.
    package func discardUndecodableBytes(for request: ImageRequest) {
        if let identified = identify(request) { cacheWriter.removeUndecodable(for: identified) }
    }
}
