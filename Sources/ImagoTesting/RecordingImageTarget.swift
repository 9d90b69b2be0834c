import Foundation
import Imago

/// An ``ImageTarget`` that records everything it was asked to show.
public final class RecordingImageTarget: ImageTarget {
    private let shown = Locked<[Image?]>([])

    /// Creates a target that has shown nothing.
    public init() {}

    /// Everything displayed, in order (`nil` for "nothing").
    public var displayed: [Image?] { shown.withLock { $0 } }
    /// What the target shows now.
    public var current: Image? { shown.withLock { $0.last ?? nil } }

    public func display(_ image: Image?) {
        shown.withLock { $0.append(image) }
    }
}
