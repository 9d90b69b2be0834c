import Imago

/// An ``ImageProcessing`` double: counts its runs and returns the image
/// unchanged, or a scripted result.
public final class MockImageProcessor: ImageProcessing {
    public let identifier: String
    private let result: (@Sendable (Image) throws -> Image)?
    private let runs = Locked(0)

    /// Creates a processor with a distinct identifier.
    ///
    /// - Parameter transform: What it does; by default returns the image unchanged.
    public init(identifier: String, transform: (@Sendable (Image) throws -> Image)? = nil) {
        self.identifier = identifier
        self.result = transform
    }

    /// How many times it ran.
    public var runCount: Int { runs.withLock { $0 } }

    public func process(_ image: Image) throws -> Image {
        runs.withLock { $0 += 1 }
        return try result?(image) ?? image
    }
}
