import Foundation
import Imago
import ImagoCodecs
import Vapor

/// Sets the service up: `POST /thumbnails` with an image as the body
/// answers its thumbnail (see ``Thumbnails``).
public func configure(_ app: Application) async throws {
    app.on(.POST, "thumbnails", body: .collect(maxSize: ByteCount(value: Thumbnails.maximumUploadBytes))) { request async throws -> Response in
        guard let body = request.body.data, body.readableBytes > 0 else {
            throw Abort(.badRequest, reason: "send the image as the request body")
        }
        let upload = Data(body.readableBytesView)
        let format: ImageFormat = request.headers[.accept].contains { $0.contains("image/png") } ? .png : .jpeg
        // Decoding and resizing are CPU work: off the event loop.
        let thumbnail = try await request.application.threadPool.runIfActive {
            try Thumbnails.thumbnail(of: upload, as: format)
        }
        return Response(status: .ok, headers: ["Content-Type": format.mimeType], body: .init(data: thumbnail))
    }
}

/// Thumbnails of uploaded images, with the limits that keep a hostile
/// upload from costing more than a normal one.
public enum Thumbnails {
    /// The longest side of a thumbnail.
    public static let maximumPixelSize = 256
    /// The largest upload, in bytes (a larger one is answered 413 before it is read whole).
    public static let maximumUploadBytes = 20 << 20
    /// The most pixels an upload may decode to: checked from its header,
    /// before any pixel memory is taken, so a small file that claims a huge
    /// size (a decompression bomb) is refused at once.
    public static let maximumSourcePixels = 40_000_000

    /// The thumbnail of `upload`, encoded as `format` (JPEG or PNG).
    ///
    /// - Throws: `Abort` with 415 for bytes that are not an image in a
    ///   format Imago reads, 422 for an image over the limits or one that
    ///   does not decode.
    public static func thumbnail(of upload: Data, as format: ImageFormat) throws -> Data {
        var options = ImageDecodingOptions()
        options.maximumPixelCount = maximumSourcePixels
        options.frameIndex = 0   // an animation's first frame
        let image: Image
        do {
            image = try ImageDecoders.all.decode(upload, options: options)
        } catch let error as ImageDecodingError {
            throw Abort(status(for: error), reason: reason(for: error))
        }
        let thumbnail = image.resized(toFit: maximumPixelSize, height: maximumPixelSize)
        return format == .png ? try ImageEncoders.png().encode(thumbnail) : try ImageEncoders.jpeg(quality: 82).encode(thumbnail)
    }

    private static func status(for error: ImageDecodingError) -> HTTPResponseStatus {
        error.code == .unsupportedFormat ? .unsupportedMediaType : .unprocessableEntity
    }

    private static func reason(for error: ImageDecodingError) -> String {
        switch error.code {
        case .unsupportedFormat: "the upload is not an image in a format this service reads"
        case .tooManyPixels, .tooManyFrames, .tooComplex: "the image is too large: \(error.message)"
        default: "the image could not be decoded: \(error.message)"
        }
    }
}
