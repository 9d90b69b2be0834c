#if Server
import Foundation
import Imago

/// The geometry of one request, worked out from the source's size and the
/// options before any pixel is touched, with imgproxy's arithmetic, step
/// for step and rounding for rounding, so a path gives the sizes it gives
/// imgproxy:
///
/// 1. The source is turned by ``ProcessingOptions/rotation`` (and
///    mirrored); every size below is in that orientation.
/// 2. ``ProcessingOptions/crop`` cuts a part of the source, at its gravity.
/// 3. The part is resampled to ``scaledWidth`` x ``scaledHeight``: `fit`
///    keeps the aspect ratio inside the box; `fill` covers the box; `fill-down`
///    is `fill` that, not enlarging, keeps the box's aspect ratio instead;
///    `force` scales each side on its own; `auto` is `fill` when the part and
///    the box have the same orientation, else `fit`. A zero side follows the
///    aspect ratio. ``ProcessingOptions/zoomX``, ``ProcessingOptions/zoomY``
///    and ``ProcessingOptions/dpr`` multiply the box; without
///    ``ProcessingOptions/enlarge`` the image is never enlarged, except by
///    ``ProcessingOptions/minWidth`` and ``ProcessingOptions/minHeight``.
/// 4. The box (``width`` x ``height``) is kept at the gravity.
/// 5. ``ProcessingOptions/extend`` grows the canvas to the box,
///    ``ProcessingOptions/extendAspectRatio`` to its aspect ratio, then
///    the padding (times the device pixel ratio) is added.
/// 6. When the result would exceed the largest side allowed (the server's,
///    or ``ProcessingOptions/maximumResultDimension``), the scale and the
///    device pixel ratio are lowered in proportion and the sizes worked out
///    again.
package struct ResizePlan: Sendable, Hashable {
    /// The source's size once turned by the rotation.
    package let orientedWidth: Int
    /// The source's height once turned by the rotation.
    package let orientedHeight: Int
    /// The part cut from the turned source before resampling; the whole
    /// source when nothing is cut.
    package let sourceCropWidth: Int
    /// The height of the part cut from the turned source.
    package let sourceCropHeight: Int
    /// The size the part is resampled to.
    package let scaledWidth: Int
    /// The height the part is resampled to.
    package let scaledHeight: Int
    /// The size kept from the resampled image, at the gravity; equal to the
    /// scaled size when nothing is cut.
    package let width: Int
    /// The height kept from the resampled image.
    package let height: Int
    /// The canvas the kept image is placed on by `extend` or
    /// `extend_aspect_ratio`; the kept size when neither applies.
    package let canvasWidth: Int
    /// The height of that canvas.
    package let canvasHeight: Int
    /// The padding, in output pixels (the path's, times the device pixel ratio).
    package let padding: ProcessingOptions.Padding
    /// The device pixel ratio in effect: the path's, lowered when the image
    /// may not be enlarged or the result is too large.
    package let effectiveDPR: Double

    /// The result's width: the canvas and the padding.
    package var resultWidth: Int { canvasWidth + padding.left + padding.right }
    /// The result's height.
    package var resultHeight: Int { canvasHeight + padding.top + padding.bottom }
    /// Whether part of the turned source is cut before resampling.
    package var cropsSource: Bool { sourceCropWidth != orientedWidth || sourceCropHeight != orientedHeight }
    /// Whether part of the resampled image is cut away.
    package var crops: Bool { width != scaledWidth || height != scaledHeight }

    private let options: ProcessingOptions

    /// Works out the geometry for a source of `sourceWidth` x `sourceHeight`
    /// (as decoded, before the path's rotation).
    ///
    /// - Parameter maximumSide: The largest side of the result the server
    ///   allows; a smaller ``ProcessingOptions/maximumResultDimension`` wins.
    package init(sourceWidth: Int, sourceHeight: Int, options: ProcessingOptions, maximumSide: Int = ImageServerPath.maximumOutputSide) {
        self.options = options
        var (sourceW, sourceH) = (max(1, sourceWidth), max(1, sourceHeight))
        if options.rotation % 180 != 0 { swap(&sourceW, &sourceH) }
        orientedWidth = sourceW
        orientedHeight = sourceH
        let cropW = Self.cropSide(sourceW, options.crop?.width ?? 0)
        let cropH = Self.cropSide(sourceH, options.crop?.height ?? 0)
        let partW = Self.minNonZero(cropW, sourceW)
        let partH = Self.minNonZero(cropH, sourceH)
        sourceCropWidth = partW
        sourceCropHeight = partH

        var scale = Self.scale(partWidth: partW, partHeight: partH, options: options)
        var sizes = Sizes(scale: scale, partWidth: partW, partHeight: partH, options: options)
        // The largest side: the server's, or a smaller one the path asks for.
        var limit = max(1, maximumSide)
        if let asked = options.maximumResultDimension, asked > 0 { limit = min(limit, asked) }
        // imgproxy scales down once; a size that saturated (an absurd zoom)
        // can still be too large after that, and is scaled down again.
        for round in 0..<8 {
            let out = Self.outputSize(sizes, scale: scale, options: options)
            guard max(out.width, out.height) > limit, round == 0 || max(out.width, out.height) >= Self.saturation else { break }
            let k = Double(limit) / Double(max(out.width, out.height))
            scale.width = max(scale.width * k, 1 / Double(partW))
            scale.height = max(scale.height * k, 1 / Double(partH))
            scale.dpr *= k
            sizes = Sizes(scale: scale, partWidth: partW, partHeight: partH, options: options)
        }
        scaledWidth = sizes.scaledW
        scaledHeight = sizes.scaledH
        width = sizes.keptW > 0 ? min(sizes.keptW, sizes.scaledW) : sizes.scaledW
        height = sizes.keptH > 0 ? min(sizes.keptH, sizes.scaledH) : sizes.scaledH
        var canvas = (width: width, height: height)
        if options.extend != nil, sizes.targetW > width || sizes.targetH > height {
            canvas = (sizes.targetW > 0 ? sizes.targetW : width, sizes.targetH > 0 ? sizes.targetH : height)
        } else if options.extendAspectRatio != nil, sizes.aspectW > 0, sizes.aspectH > 0,
                  sizes.aspectW > width || sizes.aspectH > height {
            canvas = (sizes.aspectW, sizes.aspectH)
        }
        canvasWidth = canvas.width
        canvasHeight = canvas.height
        padding = Self.scaled(options.padding, by: scale.dpr)
        effectiveDPR = scale.dpr
    }

    /// The result's size for `sizes`, as imgproxy's limit measures it: the
    /// kept part, or the extended canvas, plus the padding.
    private static func outputSize(_ sizes: Sizes, scale: Scale, options: ProcessingOptions) -> (width: Int, height: Int) {
        var outW = minNonZero(sizes.scaledW, sizes.keptW)
        var outH = minNonZero(sizes.scaledH, sizes.keptH)
        if options.extend != nil {
            (outW, outH) = (max(outW, sizes.targetW), max(outH, sizes.targetH))
        } else if options.extendAspectRatio != nil {
            (outW, outH) = (max(outW, sizes.aspectW), max(outH, sizes.aspectH))
        }
        let padded = scaled(options.padding, by: scale.dpr)
        return (outW + padded.left + padded.right, outH + padded.top + padded.bottom)
    }

    /// Where the part cut from the turned source starts (for a fixed
    /// gravity or a focus point: a `smart` crop looks at the pixels).
    package var sourceCropOrigin: (x: Int, y: Int) {
        let crop = options.crop
        let gravity = crop?.gravity ?? options.gravity
        let offset = crop?.gravity != nil ? crop!.offset : options.gravityOffset
        return Self.position(outerWidth: orientedWidth, outerHeight: orientedHeight, innerWidth: sourceCropWidth,
                             innerHeight: sourceCropHeight, gravity: gravity, offset: offset, dpr: 1)
    }

    /// Where the kept part starts in the resampled image.
    package var cropOrigin: (x: Int, y: Int) {
        Self.position(outerWidth: scaledWidth, outerHeight: scaledHeight, innerWidth: width, innerHeight: height,
                      gravity: options.gravity, offset: options.gravityOffset, dpr: effectiveDPR)
    }

    /// The resample and the cut as the library's one box type: the scaled
    /// size, and the part kept at ``cropOrigin`` (for a fixed gravity or a
    /// focus point; a `smart` crop looks at the pixels instead).
    package var geometry: ResizeGeometry {
        let origin = cropOrigin
        return ResizeGeometry(scaledWidth: scaledWidth, scaledHeight: scaledHeight, cropX: origin.x, cropY: origin.y,
                              width: width, height: height)
    }

    /// Where the kept image sits on the canvas; may be negative only when
    /// the canvas is narrower than the image on one side (the image is then cut).
    package var canvasOrigin: (x: Int, y: Int) {
        guard canvasWidth != width || canvasHeight != height else { return (0, 0) }
        let placement = (options.extend != nil ? options.extend : options.extendAspectRatio) ?? .center
        return Self.position(outerWidth: canvasWidth, outerHeight: canvasHeight, innerWidth: width, innerHeight: height,
                             gravity: placement.gravity, offset: placement.offset, dpr: effectiveDPR)
    }

    // MARK: The arithmetic

    /// The scale of each side and the device pixel ratio in effect.
    private struct Scale {
        var width: Double
        var height: Double
        var dpr: Double
    }

    /// The target box, the resampled size, the part kept and the
    /// aspect-ratio canvas, for one scale.
    private struct Sizes {
        var targetW = 0, targetH = 0, scaledW = 0, scaledH = 0, keptW = 0, keptH = 0, aspectW = 0, aspectH = 0

        init(scale: Scale, partWidth: Int, partHeight: Int, options: ProcessingOptions) {
            targetW = ResizePlan.scaled(options.width, scale.dpr * options.zoomX)
            targetH = ResizePlan.scaled(options.height, scale.dpr * options.zoomY)
            scaledW = ResizePlan.scaled(partWidth, scale.width)
            scaledH = ResizePlan.scaled(partHeight, scale.height)
            (keptW, keptH) = (targetW, targetH)
            if options.resizingType == .fillDown && !options.enlarge {
                let diffW = Double(targetW) / Double(scaledW)
                let diffH = Double(targetH) / Double(scaledH)
                if diffW > diffH && diffW > 1 {
                    (keptW, keptH) = (scaledW, ResizePlan.scaled(scaledW, Double(targetH) / Double(targetW)))
                } else if diffH > diffW && diffH > 1 {
                    (keptW, keptH) = (ResizePlan.scaled(scaledH, Double(targetW) / Double(targetH)), scaledH)
                }
            }
            if options.extendAspectRatio != nil && targetW > 0 && targetH > 0 {
                let outW = ResizePlan.minNonZero(scaledW, keptW)
                let outH = ResizePlan.minNonZero(scaledH, keptH)
                let diffW = Double(targetW) / Double(outW)
                let diffH = Double(targetH) / Double(outH)
                if diffH > diffW {
                    (aspectW, aspectH) = (outW, ResizePlan.scaled(outW, Double(targetH) / Double(targetW)))
                } else if diffW > diffH {
                    (aspectW, aspectH) = (ResizePlan.scaled(outH, Double(targetW) / Double(targetH)), outH)
                }
            }
        }
    }

    /// imgproxy's scale: shrink factors per side from the box and the
    /// resizing type, then zoom, the no-enlarging clamp (which also lowers
    /// the device pixel ratio), the minimum sizes and the device pixel ratio.
    private static func scale(partWidth: Int, partHeight: Int, options: ProcessingOptions) -> Scale {
        let (partW, partH) = (Double(partWidth), Double(partHeight))
        let dstW = options.width != 0 ? Double(options.width) : partW
        let dstH = options.height != 0 ? Double(options.height) : partH
        var shrinkW = dstW != partW ? partW / dstW : 1
        var shrinkH = dstH != partH ? partH / dstH : 1
        if shrinkW != 1 || shrinkH != 1 {
            var type = options.resizingType
            if type == .auto {
                let sameOrientation = (partW - partH >= 0 && dstW - dstH >= 0) || (partW - partH < 0 && dstW - dstH < 0)
                type = sameOrientation ? .fill : .fit
            }
            if options.width == 0 && type != .force {
                shrinkW = shrinkH
            } else if options.height == 0 && type != .force {
                shrinkH = shrinkW
            } else if type == .fit {
                (shrinkW, shrinkH) = (max(shrinkW, shrinkH), max(shrinkW, shrinkH))
            } else if type == .fill || type == .fillDown {
                (shrinkW, shrinkH) = (min(shrinkW, shrinkH), min(shrinkW, shrinkH))
            }
        }
        shrinkW /= options.zoomX
        shrinkH /= options.zoomY
        var dpr = options.dpr
        if !options.enlarge {
            let least = min(shrinkW, shrinkH)
            if least < 1 {
                shrinkW /= least
                shrinkH /= least
                if options.extend == nil { dpr /= least }
            }
            dpr = min(dpr, min(shrinkW, shrinkH))
        }
        if options.minWidth > 0 {
            let needed = partW / Double(options.minWidth)
            if needed < shrinkW {
                shrinkH /= shrinkW / needed
                shrinkW = needed
            }
        }
        if options.minHeight > 0 {
            let needed = partH / Double(options.minHeight)
            if needed < shrinkH {
                shrinkW /= shrinkH / needed
                shrinkH = needed
            }
        }
        shrinkW = min(shrinkW / dpr, partW)
        shrinkH = min(shrinkH / dpr, partH)
        return Scale(width: 1 / shrinkW, height: 1 / shrinkH, dpr: dpr)
    }

    /// A side cut by `crop`: pixels (the whole part dropped) from 1 up, a
    /// fraction of `side` below 1 (at least 1 pixel), 0 for the whole side.
    private static func cropSide(_ side: Int, _ crop: Double) -> Int {
        if crop == 0 { return 0 }
        if crop >= 1 { return Int(crop) }
        return max(1, scaled(side, crop))
    }

    /// `value` times `factor`, rounded half away from zero; 0 stays 0.
    static func scaled(_ value: Int, _ factor: Double) -> Int {
        value == 0 ? 0 : saturated((Double(value) * factor).rounded())
    }

    /// A whole number of pixels from `value`, held within ±2^40 (a NaN is
    /// 0): absurd zooms give absurd sizes, which the limit then scales
    /// down, instead of trapping.
    static func saturated(_ value: Double) -> Int {
        guard !value.isNaN else { return 0 }
        return Int(max(-Double(saturation), min(Double(saturation), value)))
    }

    /// The largest size ``saturated(_:)`` gives: 2^40.
    static let saturation = 1 << 40

    /// `value` times `factor`, rounded half to even (for offsets and padding).
    static func scaledToEven(_ value: Double, _ factor: Double) -> Int {
        saturated((value * factor).rounded(.toNearestOrEven))
    }

    private static func scaled(_ padding: ProcessingOptions.Padding, by dpr: Double) -> ProcessingOptions.Padding {
        ProcessingOptions.Padding(
            top: scaledToEven(Double(padding.top), dpr), right: scaledToEven(Double(padding.right), dpr),
            bottom: scaledToEven(Double(padding.bottom), dpr), left: scaledToEven(Double(padding.left), dpr)
        )
    }

    static func minNonZero(_ a: Int, _ b: Int) -> Int {
        a == 0 ? b : b == 0 ? a : min(a, b)
    }

    /// An offset in pixels: `value` times `dpr` when it is 1 or more (or
    /// -1 or less), else that fraction of `outer`; rounded half to even.
    static func pixels(_ value: Double, outer: Int, dpr: Double) -> Int {
        abs(value) >= 1 ? scaledToEven(value, dpr) : scaledToEven(Double(outer), value)
    }

    /// The top-left corner of an inner rectangle placed at a gravity in an
    /// outer one, kept inside it (at 0 when it does not fit) unless
    /// `allowsOverflow` (a watermark may hang over the edges): imgproxy's
    /// placement with its offsets (pixels times `dpr`, or fractions of the
    /// outer side) and focus points, by the library's one placement rule
    /// (``Imago/Gravity/origin(ofWidth:height:inWidth:height:offsetX:offsetY:clamped:)``).
    static func position(
        outerWidth: Int, outerHeight: Int, innerWidth: Int, innerHeight: Int,
        gravity: ProcessingOptions.Gravity, offset: ProcessingOptions.Offset, dpr: Double, allowsOverflow: Bool = false
    ) -> (x: Int, y: Int) {
        let anchor: CropAnchor = if let compass = gravity.compass {
            .gravity(compass, offsetX: pixels(offset.x, outer: outerWidth, dpr: dpr),
                     offsetY: pixels(offset.y, outer: outerHeight, dpr: dpr))
        } else {
            // A focus point (a `smart` crop looks at the pixels; without them, the centre).
            gravity == .focusPoint ? .focusPoint(x: offset.x, y: offset.y) : .gravity(.center)
        }
        if allowsOverflow, case .gravity(let compass, let offsetX, let offsetY) = anchor {
            return compass.origin(ofWidth: innerWidth, height: innerHeight, inWidth: outerWidth, height: outerHeight,
                                  offsetX: offsetX, offsetY: offsetY, clamped: false)
        }
        return anchor.origin(ofWidth: innerWidth, height: innerHeight, inWidth: outerWidth, height: outerHeight)!
    }
}
#endif
