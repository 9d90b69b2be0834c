import Foundation
import Imago

/// A spy ``CodecFunctions`` table: records what a decoder passes to each
/// step and returns scripted results.
///
/// `State` is what the scripted ``OpenedImage`` carries to `makeImage`;
/// most tests need none (`Void`), and the type is inferred:
///
/// ```swift
/// let spy = SpyCodecTable(opened: OpenedImage(width: 4, height: 4), image: TestImages.solid(width: 4, height: 4))
/// let decoder = CodecDecoder(format: .png, functions: spy.functions)
/// _ = try decoder.decode(data, options: ImageDecodingOptions(frameIndex: 0))
/// #expect(spy.openCalls.map(\.data) == [data])
/// #expect(spy.makeImageCalls.map(\.frameIndex) == [0])
/// ```
///
/// A state of your own is recorded with its type, so a test can check that
/// what `open` produced reached `makeImage`:
///
/// ```swift
/// let spy = SpyCodecTable(opened: OpenedImage(width: 4, height: 4, state: "header"), image: image)
/// #expect(spy.makeImageCalls.map(\.opened.state) == ["header"])
/// ```
///
/// When `open` fails there is no opened image to infer `State` from: name
/// it, as in `SpyCodecTable<Void>(open: .failure(error), makeImage: .success(image))`.
public final class SpyCodecTable<State: Sendable>: Sendable {
    /// One call to ``CodecFunctions/open``.
    public struct OpenCall: Sendable {
        /// The data passed to `open`.
        public let data: Data
        /// The options passed to `open`.
        public let options: ImageDecodingOptions
    }

    /// One call to ``CodecFunctions/makeImage``.
    public struct MakeImageCall: Sendable {
        /// The opened image passed to `makeImage`, with its typed state.
        public let opened: OpenedImage<State>
        /// The frame index passed to `makeImage`.
        public let frameIndex: Int?
        /// The options passed to `makeImage`.
        public let options: ImageDecodingOptions
    }

    private let openResult: Result<OpenedImage<State>, any Error>
    private let imageResult: Result<Image, any Error>
    private let opens = Locked<[OpenCall]>([])
    private let makes = Locked<[MakeImageCall]>([])

    /// Creates a spy whose steps answer with the given results.
    public init(open: Result<OpenedImage<State>, any Error>, makeImage: Result<Image, any Error>) {
        self.openResult = open
        self.imageResult = makeImage
    }

    /// Creates a spy whose steps succeed with `opened` and `image`.
    public convenience init(opened: OpenedImage<State>, image: Image) {
        self.init(open: .success(opened), makeImage: .success(image))
    }

    /// Every call to `open`, in order.
    public var openCalls: [OpenCall] { opens.withLock { $0 } }
    /// Every call to `makeImage`, in order.
    public var makeImageCalls: [MakeImageCall] { makes.withLock { $0 } }

    /// The table to give a decoder.
    public var functions: CodecFunctions<State> {
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

extension CodecFunctions where State == Never {
    /// The error every entry of ``failing`` throws.
    public struct FailingTableError: Error, Sendable, Equatable {
        /// Which entry threw: `"open"` or `"makeImage"`.
        public let entry: String

        /// Creates the error for `entry`.
        public init(entry: String) { self.entry = entry }
    }

    /// A table whose every entry throws ``FailingTableError``.
    ///
    /// Its state is `Never`: it never opens an image, and no
    /// `OpenedImage<Never>` exists to call its `makeImage` with.
    ///
    /// ```swift
    /// let decoder = CodecDecoder(format: .jpeg, functions: .failing)
    /// // decoding throws couldNotOpen, with CodecFunctions<Never>.FailingTableError(entry: "open") as underlying
    /// ```
    public static var failing: CodecFunctions<Never> {
        CodecFunctions(
            open: { _, _ in throw FailingTableError(entry: "open") },
            makeImage: { _, _, _ in throw FailingTableError(entry: "makeImage") }
        )
    }
}
