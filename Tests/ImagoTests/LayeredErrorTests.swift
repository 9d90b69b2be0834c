import Foundation
import Imago
import Testing

/// The shape every layer's error shares: codes by name, the chain beneath, matching.
@Suite struct LayeredErrorTests {
    let url = URL(string: "https://example.com/a.png")!

    /// A pipeline error over a response error over a decoding error.
    var chain: ImagePipelineError {
        let decoding = ImageDecodingError(.tooManyPixels, format: .png, message: "too big")
        let response = ResponseError(.decodingFailed, url: url, statusCode: 200, underlying: decoding)
        return ImagePipelineError(.decodingFailed, url: url, underlying: response)
    }

    @Test func codesCompareAndPrintByName() {
        #expect(DataLoadingError.Code.timedOut == .timedOut)
        #expect(DataLoadingError.Code.timedOut != .cannotConnect)
        #expect("\(ResponseError.Code.unacceptableStatus)" == "unacceptableStatus")
    }

    @Test func containsFindsACodeOfAnyLayerBeneath() {
        #expect(chain.contains(ImagePipelineError.Code.decodingFailed))
        #expect(chain.contains(ResponseError.Code.decodingFailed))
        #expect(chain.contains(ImageDecodingError.Code.tooManyPixels))
        #expect(!chain.contains(ImageDecodingError.Code.couldNotOpen))
        #expect(!chain.contains(DataLoadingError.Code.timedOut))
    }

    @Test func firstReturnsTheLayerItselfUnchanged() {
        #expect(chain.first(ResponseError.self)?.statusCode == 200)
        #expect(chain.first(ImageDecodingError.self)?.format == .png)
        #expect(chain.first(DataLoadingError.self) == nil)
    }

    @Test func catchClausesMatchACodeAnywhereInTheChain() {
        func classify(_ error: any Error) -> String {
            do { throw error }
            catch let error where ImageDecodingError.Code.tooManyPixels.matches(error) { return "too big" }
            catch let error where DataLoadingError.Code.timedOut.matches(error) { return "slow" }
            catch { return "other" }
        }
        #expect(classify(chain) == "too big")
        #expect(classify(NetworkClientError(.sessionFailed, url: url, underlying: DataLoadingError(.timedOut, url: url, message: "slow"))) == "slow")
        #expect(classify(CancellationError()) == "other")
    }
}
