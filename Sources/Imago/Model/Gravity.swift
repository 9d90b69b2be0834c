/// Where a part is placed inside a larger box: the centre, an edge or a
/// corner. Used to cut (``ResizeGeometry``, ``Image/cropped(to:anchor:)``),
/// to place on a canvas (``Image/extended(toWidth:height:gravity:background:)``)
/// and to place an overlay (``Image/composited(with:at:opacity:linearLight:)``).
public enum Gravity: String, Sendable, Hashable, CaseIterable {
    /// The centre.
    case center
    /// The top edge, centred across.
    case north
    /// The bottom edge, centred across.
    case south
    /// The right edge, centred down.
    case east
    /// The left edge, centred down.
    case west
    /// The top-right corner.
    case northEast
    /// The top-left corner.
    case northWest
    /// The bottom-right corner.
    case southEast
    /// The bottom-left corner.
    case southWest

    /// The top-left corner of a `width` x `height` part placed at this
    /// gravity inside `outerWidth` x `outerHeight`: on the gravity's edge,
    /// with all the spare pixels on the opposite one, or half of them
    /// (rounded down) when centred. This is the one placement rule.
    ///
    /// ```swift
    /// Gravity.southEast.origin(ofWidth: 20, height: 10, inWidth: 200, height: 150, offsetX: 5, offsetY: 7)
    /// // (175, 133)
    /// ```
    ///
    /// - Parameters:
    ///   - offsetX: Pixels inward from the gravity's vertical edge (for a
    ///     gravity centred across: to the right).
    ///   - offsetY: Pixels inward from the gravity's horizontal edge (for a
    ///     gravity centred down: downward).
    ///   - clamped: Whether the part is kept inside the box (at 0 when it
    ///     does not fit); without, it may hang over the edges, and a part
    ///     larger than the box is centred on it with negative coordinates.
    public func origin(ofWidth width: Int, height: Int, inWidth outerWidth: Int, height outerHeight: Int,
                       offsetX: Int = 0, offsetY: Int = 0, clamped: Bool = true) -> (x: Int, y: Int) {
        // Offsets beyond any image are held at ±2^40, so no sum traps.
        let offsetX = Self.held(offsetX), offsetY = Self.held(offsetY)
        let spareX = outerWidth - width, spareY = outerHeight - height
        var x = switch self {
        case .west, .northWest, .southWest: offsetX
        case .east, .northEast, .southEast: spareX - offsetX
        case .center, .north, .south: Self.half(spareX, clamped: clamped) + offsetX
        }
        var y = switch self {
        case .north, .northWest, .northEast: offsetY
        case .south, .southWest, .southEast: spareY - offsetY
        case .center, .east, .west: Self.half(spareY, clamped: clamped) + offsetY
        }
        if clamped {
            x = max(0, min(x, spareX))
            y = max(0, min(y, spareY))
        }
        return (x, y)
    }

    /// The largest offset taken into account: 2^40 pixels.
    static let farthest = 1 << 40

    /// `value` held within ±``farthest``: a place or offset beyond any
    /// image, made small enough that sums with image sizes cannot trap.
    static func held(_ value: Int) -> Int { Swift.max(-farthest, Swift.min(farthest, value)) }

    /// Half the spare pixels, the odd one after; a negative spare (a part
    /// larger than the box) is centred only when not clamped.
    private static func half(_ spare: Int, clamped: Bool) -> Int {
        clamped ? max(0, spare) / 2 : spare >= 0 ? spare / 2 : -((-spare + 1) / 2)
    }
}
