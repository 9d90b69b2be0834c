// Every Swift snippet of the README and the DocC articles, compiled here.
// A region between `// snippet: NAME` and `// end snippet` is a snippet's
// text, exactly (minus its imports, which are this file's, and minus the
// indentation of the function around it); SnippetsMatchTheDocsTests checks
// that each snippet in the docs is one of these regions. The snippets that
// reach the network only compile; the tests among them also run.
import Foundation
import Imago
import ImagoAsyncHTTPClient
import ImagoCodecs
import ImagoTesting
import Testing

// The names the snippets take for granted.
let artworkURL = URL(string: "https://images.example/artwork.png")!
let missingURL = URL(string: "https://images.example/missing.png")!
let flakyURL = URL(string: "https://images.example/flaky.png")!
let pngBytes = try! ImageEncoders.png().encode(TestImages.solid(width: 2, height: 2))

/// A target for the pipeline snippet.
final class Cell: ImageTarget, @unchecked Sendable {
    // @unchecked Sendable: compiled, never run.
    func display(_ image: Image?) {}
}

enum ReadmeSnippets {
    static func quickStart(feedURL: URL, artworkURL: URL, photoURL: URL) async throws {
        // snippet: readme-quick-start
        // URLSession for http(s), the file system for file URLs, every codec.
        let client = NetworkClient(imageDecoder: ImageDecoders.all)

        // JSON: the content type must be JSON, the status 2xx, then it is decoded.
        struct Feed: Decodable { let entries: [Entry]; struct Entry: Decodable { let name: String } }
        let feed = try await client.json(Feed.self, from: feedURL)

        // Images: the content type must be image/* (or octet-stream / absent: the
        // bytes decide), the status 2xx, then the decoder runs.
        let image = try await client.image(from: artworkURL)
        print(image.width, image.height, image.pixelFormat)

        // A thumbnail straight from the decoder: JPEGs are scaled down while
        // decoding (libjpeg-turbo's DCT scaling), then resized to exactly 256 px.
        let thumbnail = try await client.image(from: photoURL, options: ImageDecodingOptions(maximumPixelSize: 256))

        // Bitmaps resize, crop, convert and encode.
        let square = image.resized(toFit: 128, height: 128, mode: .crop)
        let jpeg = try ImageEncoders.jpeg(quality: 80).encode(square)
        // end snippet
        _ = (feed, thumbnail, jpeg)
    }

    static func pipeline(url: URL, cell: Cell, album: (artworkURL: URL, name: String), placeholder: Image) async throws {
        // snippet: readme-pipeline
        let pipeline = ImagePipeline.shared            // every codec, memory cache, disk cache in ~/.cache/imago
        let response = try await pipeline.image(for: ImageRequest(url: url, maximumPixelSize: 256))
        print(response.source)                         // .memory, .disk, .network or .file

        let task = pipeline.imageTask(for: ImageRequest(url: url, priority: .low))
        task.setPriority(.high)                        // the row scrolled into view
        task.cancel()                                  // shared work stops only when nobody wants it

        ImageClient.shared.setImage(on: cell, from: album.artworkURL, placeholder: placeholder)
        // end snippet
    }

    static func color(data: Data) throws {
        // snippet: readme-color
        let options = ImageDecodingOptions(colorManagement: .keepOriginal)
        let image = try ImageDecoders.jpeg().decode(data, options: options)
        print(image.colorProfile ?? "sRGB")                                 // ColorProfile(RGB, 548 bytes)
        let copy = try ImageEncoders.jpeg(quality: 90).encode(image)        // the profile goes with it
        let srgb = try ImageDecoders.jpeg().decode(data)                    // converted: colorProfile == nil
        let tagged = try ImageEncoders.webp(embedsSRGBProfile: true).encode(srgb)   // marked as sRGB
        // end snippet
        _ = (copy, tagged)
    }

    static func resampling(image: Image) {
        // snippet: readme-resampling
        let sharp = image.resized(width: 400, height: 300, filter: .lanczos3)
        let options = ImageDecodingOptions(thumbnail: Thumbnail(maximumPixelSize: 256, filter: .lanczos3, linearLight: true))
        // end snippet
        _ = (sharp, options)
    }

    /// An upload handler's work, as a Vapor or Hummingbird route would do it.
    static func processing(upload: Data, logo: Image) throws -> Data {
        // snippet: readme-processing
        let photo = try ImageDecoders.all.decode(upload)
        let card = photo
            .trimmed(.topLeftPixel, threshold: 10)                                    // a flat border, cut away
            .cropped(to: .aspectRatio(width: 16, height: 9), anchor: .smart(.attention))
            .resized(toFit: 1280, height: 720)
            .sharpened(sigma: 0.8)                                                    // crisp after the downscale
            .extended(toWidth: 1280, height: 1280, background: .white)                // padded to a square
            .composited(with: logo, at: .gravity(.southEast, offsetX: 24, offsetY: 24), opacity: 0.6)
        return try ImageEncoders.jpeg(quality: 82).encode(card)
        // end snippet
    }

    static func metadata(upload: Data) throws -> Data {
        // snippet: readme-metadata
        let photo = try ImageDecoders.all.decode(upload)
        print(photo.metadata?.camera ?? "unknown camera", photo.metadata?.dateTimeOriginal ?? "")
        let decision = OutputPolicy(metadata: .keepCopyright).decision(forSource: .jpeg, hasAlpha: false)
        let thumbnail = try ImageEncoders.encode(photo.resized(toFit: 800, height: 800), as: decision)
        // end snippet
        return thumbnail
    }

    static func processors(url: URL, logo: Image) {
        // snippet: readme-processors
        let request = ImageRequest(url: url, processors: [
            ImageProcessors.Trim(threshold: 10),
            ImageProcessors.Crop(to: .aspectRatio(width: 16, height: 9), anchor: .smart(.attention)),
            ImageProcessors.Resize(width: 1280, height: 720),
            ImageProcessors.Sharpen(sigma: 0.8),
            ImageProcessors.Composite(overlay: logo, id: "logo-v2", at: .gravity(.southEast, offsetX: 24, offsetY: 24), opacity: 0.6),
        ])
        // end snippet
        _ = request
    }

    static func geometry(image: Image) throws {
        // snippet: readme-geometry
        let geometry = ResizeGeometry(sourceWidth: image.width, sourceHeight: image.height,
                                      boxWidth: 300, boxHeight: 200, mode: .crop, gravity: .north)
        let banner = image.resized(to: geometry)                  // 300x200, the top kept

        let format = ImageFormat.defaultOutputFormat(forSource: .heic, hasAlpha: banner.pixelFormat.hasAlpha)
        let data = try ImageEncoders.encoder(for: format)!.encode(banner)   // JPEG at 85; PNG with alpha
        // end snippet
        _ = data
    }

    static func asyncHTTPClient() {
        // snippet: readme-async-http-client
        let loader = DataLoader(network: RetryingDataLoader(wrapping: AsyncHTTPClientDataLoader()))
        let pipeline = ImagePipeline(configuration: .init(dataLoader: loader, decoder: ImageDecoders.all))
        // end snippet
        _ = pipeline
    }

    static func failures(client: NetworkClient, url: URL) async {
        // snippet: readme-failures
        do {
            _ = try await client.image(from: url)
        } catch let error as NetworkClientError {
            if let rejected = error.first(ResponseError.self) {          // content type, status or decoding
                print("rejected:", rejected.code, rejected.statusCode ?? 0)
            } else if let failed = error.first(DataLoadingError.self) {  // refused, timed out, too large, ...
                print("could not load:", failed.code, failed.message)
            }
        }
        // end snippet
        catch {}
    }
}

// snippet: readme-testing
@Test func showsArtwork() async throws {
    let loader = MockDataLoader()                          // scripted per URL, no global state
    loader.stub(artworkURL, .image(pngBytes))
    loader.stub(missingURL, .status(404, contentType: "image/png"))
    let client = NetworkClient(loader: loader, imageDecoder: MockImageDecoder(returning: TestImages.solid(width: 2, height: 2)))

    let image = try await client.image(from: artworkURL)
    #expect(image.width == 2)
    await #expect(throws: NetworkClientError.self) { try await client.image(from: missingURL) }
    #expect(loader.requests.map(\.url) == [artworkURL, missingURL])
}

@Test func retriesAServerThatIsBusyOnce() async throws {
    let loader = MockDataLoader()
    loader.stub(flakyURL, sequence: [.status(503), .image(pngBytes)])   // one response per request, in turn
    let time = ManualTimeSource()                                       // back-off waits return at once
    let client = NetworkClient(loader: RetryingDataLoader(wrapping: loader, time: time.timeSource), imageDecoder: MockImageDecoder())

    _ = try await client.image(from: flakyURL)
    #expect(loader.requests.count == 2)
    #expect(time.sleeps.count == 1)
}
// end snippet

/// The processing snippet, run on a photo-like upload with a white border.
@Test func theProcessingSnippetMakesASquareCard() throws {
    let photo = TestImages.gradient(width: 1600, height: 1000)
    let upload = try ImageEncoders.png().encode(photo.padded(top: 40, right: 40, bottom: 40, left: 40, background: .white))
    let logo = TestImages.solid(width: 64, height: 32)
    let card = try ImageDecoders.all.decode(ReadmeSnippets.processing(upload: upload, logo: logo))
    #expect(card.width == 1280 && card.height == 1280)
    // The white padding above and below the 1280x720 picture.
    #expect(card.pixel(x: 640, y: 10).allSatisfy { $0 > 245 })
    #expect(card.pixel(x: 640, y: 640).contains { $0 < 230 })
}

enum GettingStartedSnippets {
    static func loadAnImage(url: URL) async throws -> NetworkClient {
        // snippet: getting-started-load
        let client = NetworkClient(imageDecoder: ImageDecoders.all)
        let image = try await client.image(from: url)
        // end snippet
        _ = image
        return client
    }

    static func thumbnail(client: NetworkClient, url: URL) async throws {
        // snippet: getting-started-thumbnail
        let options = ImageDecodingOptions(maximumPixelSize: 256)
        let thumbnail = try await client.image(from: url, options: options)
        // end snippet
        _ = thumbnail
    }
}

extension GettingStartedSnippets {
    static func rawBytes(client: NetworkClient, fileURL: URL, iconURL: URL) async throws {
        // snippet: getting-started-raw-bytes
        let bytes = try await client.data(from: fileURL)
        let png = try await client.data(from: iconURL, accepting: .images)
        // end snippet
        _ = (bytes, png)
    }
}

@Test func gettingStartedTestRuns() async throws {
    let url = artworkURL
    // snippet: getting-started-test
    let loader = MockDataLoader()
    loader.stub(url, .image(pngBytes))
    let client = NetworkClient(loader: loader, imageDecoder: MockImageDecoder())
    _ = try await client.image(from: url)
    #expect(loader.requests.map(\.url) == [url])
    // end snippet
}
