import Foundation
import Imago

/// A spy ``ColorConversionFunctions`` table: records each conversion a
/// decoder asks for and answers as scripted, so a test can check when
/// colour management runs without depending on a colour library.
///
/// ```swift
/// let spy = SpyColorConversion()
/// let decoder = CodecDecoder(format: .png, functions: table, colorConversion: spy.functions)
/// _ = try decoder.decode(data, options: ImageDecodingOptions())
/// #expect(spy.calls.map(\.profile) == [profile])
/// ```
public final class SpyColorConversion: Sendable {
    /// One call to ``ColorConversionFunctions/convertToSRGB``.
    public struct Call: Sendable {
        /// The image passed in.
        public let image: Image
        /// The profile passed in.
        public let profile: ColorProfile
    }

    private let result: @Sendable (Image) throws -> Image
    private let recorded = Locked<[Call]>([])

    /// Creates a spy that answers with `result(image)`; by default, the
    /// image unchanged except that it carries no profile, as a conversion
    /// to sRGB leaves it.
    public init(result: @escaping @Sendable (Image) throws -> Image = { image in
        var converted = image
        converted.colorProfile = nil
        return converted
    }) {
        self.result = result
    }

    /// Creates a spy whose every conversion throws `error`.
    public convenience init(failingWith error: any Error & Sendable) {
        self.init(result: { _ in throw error })
    }

    /// Every call, in order.
    public var calls: [Call] { recorded.withLock { $0 } }

    /// The table to give a decoder.
    public var functions: ColorConversionFunctions {
        ColorConversionFunctions { image, profile in
            self.recorded.withLock { $0.append(Call(image: image, profile: profile)) }
            return try self.result(image)
        }
    }
}
