/// How a stored image must be turned to be shown upright: the values of
/// the EXIF `Orientation` tag (1 to 8).
public enum ImageOrientation: Int, Sendable, Hashable, CaseIterable {
    /// Stored upright (1).
    case up = 1
    /// Mirrored left to right (2).
    case upMirrored = 2
    /// Upside down (3).
    case down = 3
    /// Mirrored top to bottom (4).
    case downMirrored = 4
    /// Mirrored along the top-left to bottom-right diagonal (5).
    case leftMirrored = 5
    /// Needs a quarter turn clockwise (6): the usual portrait photo.
    case right = 6
    /// Mirrored along the top-right to bottom-left diagonal (7).
    case rightMirrored = 7
    /// Needs a quarter turn counter-clockwise (8).
    case left = 8

    /// Whether showing the image upright swaps its width and height.
    public var swapsDimensions: Bool { rawValue >= 5 }

    /// The orientation that undoes this one: applying both leaves an image
    /// as it was (a quarter turn one way undoes the other; every other
    /// orientation undoes itself).
    public var inverse: ImageOrientation {
        switch self {
        case .right: .left
        case .left: .right
        default: self
        }
    }
}
