import Foundation
import Imago

/// A spy ``CodecFunctions`` table: records what a decoder passes to each
/// step and returns scripted results.
///
/// ```swift
/// let spy = SpyCodecTable(opened: OpenedImage(width: 4, height: 4), image: TestImages.solid(width: 4, height: 4))
/// let decoder = CodecDecoder(format: .png, functions: spy.functions)
/// _ = try decoder.decode(data, options: ImageDecodingOptions(frameIndex: 0))
/// #expect(spy.openCalls.map(\.data) == [data])
/// #expect(spy.makeImageCalls.map(\.frameIndex) == [0])
/// ```
public final class SpyCodecTable: Sendable {
    /// One call to ``CodecFunctions/open``.
    public struct OpenCall: Sendable {
        public let data: Data
        public let options: ImageDecodingOptions
    }

    /// One call to ``CodecFunctions/makeImage``.
    public struct MakeImageCall: Sendable {
        public let opened: OpenedImage
        public let frameIndex: Int?
        public let options: ImageDecodingOptions
    }

    private let openResult: Result<OpenedImage, any Error>
    private let imageResult: Result<Image, any Error>
    private let opens = Locked<[OpenCall]>([])
    private let makes = Locked<[MakeImageCall]>([])

    /// Creates a spy whose steps answer with the given results.
    public init(open: Result<OpenedImage, any Error>, makeImage: Result<Image, any Error>) {
        self.openResult = open
        self.imageResult = makeImage
    }

    /// Creates a spy whose steps succeed with `opened` and `image`.
    public convenience init(opened: OpenedImage, image: Image) {
        self.init(open: .success(opened), makeImage: .success(image))
    }

    /// Every call to `open`, in order.
    public var openCalls: [OpenCall] { opens.withLock { $0 } }
    /// Every call to `makeImage`, in order.
    public var makeImageCalls: [MakeImageCall] { makes.withLock { $0 } }

    /// The table to give a decoder.
    public var functions: CodecFunctions {
        CodecFunctions(
            open: { data, options in
                self.opens.withLock { $0.append(OpenCall(data: data, options: options)) }
                return try self.openResult.get()
            },
            makeImage: { opened, frameIndex, options in
                self.makes.withLock { $0.append(MakeImageCall(opened: opened, frameIndex: frameIndex, options: options)) }
                return try self.imageResult.get()
            }
        )
    }
}

extension CodecFunctions {
    /// The error every entry of ``failing`` throws.
    public struct FailingTableError: Error, Sendable, Equatable {
        /// Which entry threw: `"open"` or `"makeImage"`.
        public let entry: String

        /// Creates the error for `entry`.
        public init(entry: String) { self.entry = entry }
    }

    /// A table whose every entry throws ``FailingTableError``.
    public static let failing = CodecFunctions(
        open: { _, _ in throw FailingTableError(entry: "open") },
        makeImage: { _, _, _ in throw FailingTableError(entry: "makeImage") }
    )
}
