import Foundation
import Imago

/// An ``ImageDecoding`` double: returns a scripted image or throws a
/// scripted error (or decodes through a function of the bytes), and records
/// every call.
///
/// ```swift
/// let decoder = MockImageDecoder(result: .success(TestImages.solid(width: 2, height: 2)))
/// ...
/// #expect(decoder.calls.count == 1)
///
/// // Tell apart which bytes each caller got: an image as wide as the payload.
/// let sizing = MockImageDecoder { data in TestImages.solid(width: data.count, height: 1) }
/// ```
public final class MockImageDecoder: ImageDecoding {
    /// One recorded call.
    public struct Call: Sendable {
        /// The data passed in.
        public let data: Data
        /// The options passed in.
        public let options: ImageDecodingOptions
    }

    private let decoding: Locked<@Sendable (Data) throws -> Image>
    private let recorded = Locked<[Call]>([])

    /// Creates a decoder that always answers with `result`.
    public convenience init(result: Result<Image, any Error>) {
        self.init(decoding: { _ in try result.get() })
    }

    /// Creates a decoder that answers each call with `decoding` applied to
    /// the bytes (for tests that check which bytes each caller received).
    public init(decoding: @escaping @Sendable (Data) throws -> Image) {
        self.decoding = Locked(decoding)
    }

    /// Creates a decoder that returns `image`.
    public convenience init(returning image: Image = TestImages.solid(width: 1, height: 1)) {
        self.init(result: .success(image))
    }

    /// Creates a decoder that throws `error`.
    public convenience init(throwing error: any Error) {
        self.init(result: .failure(error))
    }

    /// Changes what later calls answer.
    public func setResult(_ result: Result<Image, any Error>) {
        decoding.withLock { $0 = { _ in try result.get() } }
    }

    /// Every call, in order.
    public var calls: [Call] { recorded.withLock { $0 } }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        recorded.withLock { $0.append(Call(data: data, options: options)) }
        return try decoding.withLock { $0 }(data)
    }
}
