import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import Testing

/// The decoder drives its `CodecFunctions` table in two steps (`open`, then
/// `makeImage`) and checks limits in between.
@Suite struct CodecDecoderTests {
    let data = Data([1, 2, 3, 4, 5])
    let image = TestImages.gradient(width: 4, height: 4)

    @Test func passesDataOptionsAndFrameIndexThroughAndReturnsTheTablesImage() throws {
        let spy = SpyCodecTable(opened: OpenedImage(width: 4, height: 4, frameCount: 3), image: image)
        let options = ImageDecodingOptions(maximumPixelCount: 1_000, frameIndex: 2, maximumPixelSize: 64)
        let decoded = try CodecDecoder(format: .gif, functions: spy.functions).decode(data, options: options)
        #expect(decoded == image)
        #expect(spy.openCalls.map(\.data) == [data])
        #expect(spy.openCalls.map(\.options) == [options])
        #expect(spy.makeImageCalls.map(\.frameIndex) == [2])
        #expect(spy.makeImageCalls.map(\.options) == [options])
        #expect(spy.makeImageCalls.map(\.opened.frameCount) == [3])
    }

    @Test func theStateOpenReturnedReachesTheImageStepWithItsType() throws {
        // Given a table whose open returns a state of its own type
        struct Header: Sendable, Equatable { let token: Int }
        let spy = SpyCodecTable(opened: OpenedImage(width: 4, height: 4, state: Header(token: 42)), image: image)
        // When the decoder runs both steps
        _ = try CodecDecoder(format: .png, functions: spy.functions).decode(data)
        // Then makeImage received that state, typed, with no cast
        let states: [Header] = spy.makeImageCalls.map(\.opened.state)
        #expect(states == [Header(token: 42)])
    }

    @Test func openFailureIsCouldNotOpenAndTheImageStepIsNotCalled() throws {
        let spy = SpyCodecTable<Void>(open: .failure(CodecError(library: "test", code: 7, message: "bad header")), makeImage: .success(image))
        let error = try #require(throws: ImageDecodingError.self) { try CodecDecoder(format: .png, functions: spy.functions).decode(data) }
        #expect(error.code == .couldNotOpen)
        #expect(error.format == .png)
        #expect(error.underlying as? CodecError == CodecError(library: "test", code: 7, message: "bad header"))
        #expect(spy.makeImageCalls.isEmpty)
    }

    @Test func imageFailureIsCouldNotProduceImage() throws {
        let spy = SpyCodecTable(open: .success(OpenedImage(width: 2, height: 2)), makeImage: .failure(CodecError(library: "test", code: 9, message: "bad data")))
        let error = try #require(throws: ImageDecodingError.self) { try CodecDecoder(format: .png, functions: spy.functions).decode(data) }
        #expect(error.code == .couldNotProduceImage)
        #expect(error.underlying as? CodecError == CodecError(library: "test", code: 9, message: "bad data"))
    }

    @Test func failingTableFailsAtTheFirstStep() throws {
        let error = try #require(throws: ImageDecodingError.self) { try CodecDecoder(format: .jpeg, functions: .failing).decode(data) }
        #expect(error.code == .couldNotOpen)
        #expect(error.underlying as? CodecFunctions<Never>.FailingTableError == .init(entry: "open"))
    }

    @Test func pixelLimitIsCheckedFromTheHeaderBeforeTheImageStep() throws {
        let spy = SpyCodecTable(opened: OpenedImage(width: 100_000, height: 100_000), image: image)
        let error = try #require(throws: ImageDecodingError.self) { try CodecDecoder(format: .png, functions: spy.functions).decode(data) }
        #expect(error.code == .tooManyPixels)
        #expect(spy.makeImageCalls.isEmpty)
    }

    @Test func animationsCountEveryFrameAgainstTheLimit() throws {
        let spy = SpyCodecTable(opened: OpenedImage(width: 1_000, height: 1_000, frameCount: 60), image: image)
        let decoder = CodecDecoder(format: .gif, functions: spy.functions)
        let all = try #require(throws: ImageDecodingError.self) { try decoder.decode(data) }
        #expect(all.code == .tooManyPixels)
        // Frame 59 needs frames 0...59 composited: over the limit too.
        let late = try #require(throws: ImageDecodingError.self) { try decoder.decode(data, options: ImageDecodingOptions(frameIndex: 59)) }
        #expect(late.code == .tooManyPixels)
        // An early frame is within it.
        _ = try decoder.decode(data, options: ImageDecodingOptions(frameIndex: 9))
        #expect(spy.makeImageCalls.count == 1)
    }

    @Test func overflowingDimensionsAreRejected() throws {
        let spy = SpyCodecTable(opened: OpenedImage(width: Int.max / 2, height: 4, frameCount: 900), image: image)
        let error = try #require(throws: ImageDecodingError.self) { try CodecDecoder(format: .gif, functions: spy.functions).decode(data) }
        #expect(error.code == .tooManyPixels)
    }

    @Test func frameCountOverTheLimitIsRejectedBeforeTheImageStep() throws {
        let spy = SpyCodecTable(opened: OpenedImage(width: 1, height: 1, frameCount: 1_001), image: image)
        let error = try #require(throws: ImageDecodingError.self) { try CodecDecoder(format: .gif, functions: spy.functions).decode(data) }
        #expect(error.code == .tooManyFrames)
        #expect(spy.makeImageCalls.isEmpty)
    }

    @Test func missingFrameIsOutOfRange() throws {
        let spy = SpyCodecTable(opened: OpenedImage(width: 2, height: 2, frameCount: 2), image: image)
        let error = try #require(throws: ImageDecodingError.self) {
            try CodecDecoder(format: .gif, functions: spy.functions).decode(data, options: ImageDecodingOptions(frameIndex: 2))
        }
        #expect(error.code == .frameOutOfRange)
        #expect(spy.makeImageCalls.isEmpty)
    }

    @Test func emptyHeaderIsCouldNotOpen() throws {
        let spy = SpyCodecTable(opened: OpenedImage(width: 0, height: 5), image: image)
        let error = try #require(throws: ImageDecodingError.self) { try CodecDecoder(format: .png, functions: spy.functions).decode(data) }
        #expect(error.code == .couldNotOpen)
        #expect(spy.makeImageCalls.isEmpty)
    }

    @Test func oneEntryCanBeReplacedWhileTheOtherStaysReal() throws {
        var functions = CodecFunctions.png
        functions.makeImage = { opened, _, _ in TestImages.solid(width: opened.width, height: opened.height) }
        let png = try Fixtures.data("pngsuite/basn2c08.png")
        let image = try CodecDecoder(format: .png, functions: functions).decode(png)
        #expect(image.pixels == TestImages.solid(width: 32, height: 32).pixels)
        #expect(image.colorProfile?.colorSpace == "RGB", "the real open read the file's gAMA chunk; a decoder without a colour table keeps it")
    }
}
