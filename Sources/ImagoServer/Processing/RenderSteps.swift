#if Server
import Foundation
import Imago

/// The processing of a render, declared as imgproxy declares its own: an
/// ordered list of steps (``all``), each one of the library's public
/// operations, run over a ``RenderState`` that carries the image and what
/// the steps before worked out (the sizes, once the source is trimmed).
/// ``ProcessingOptions/apply(to:maximumSide:watermark:watermarkOpacity:)``
/// runs them in order, and stops once the render's ``WorkDeadline`` has
/// passed (the result is then dropped).
struct RenderStep: Sendable {
    /// imgproxy's name for the step.
    let name: String
    /// What the step does; a step with nothing to do leaves the state as it is.
    let run: @Sendable (inout RenderState) -> Void

    /// The steps, in imgproxy's order.
    static let all: [RenderStep] = [trim, prepare, rotateAndFlip, crop, scale, filters, extend, padding, watermark]

    /// `trim`: a border of one colour (or of transparency) cut away.
    static let trim = RenderStep(name: "trim") { state in
        guard let trim = state.options.trim else { return }
        state.image = state.image.trimmed(trim.color.map(TrimReference.color) ?? .topLeftPixel, threshold: trim.threshold,
                                          equalHorizontal: trim.equalHorizontal, equalVertical: trim.equalVertical)
    }

    /// `prepare`: the sizes, worked out once on the (trimmed) source.
    static let prepare = RenderStep(name: "prepare") { state in
        state.plan = ResizePlan(sourceWidth: state.image.width, sourceHeight: state.image.height, options: state.options,
                                maximumSide: state.maximumSide)
    }

    /// `rotateAndFlip`: quarter turns, then mirroring.
    static let rotateAndFlip = RenderStep(name: "rotateAndFlip") { state in
        let options = state.options
        state.image = state.image.rotated(degrees: options.rotation)
            .flipped(horizontally: options.flipsHorizontally, vertically: options.flipsVertically)
    }

    /// `crop`: the part `crop` names, cut from the source before resizing
    /// (a `smart` gravity keeps the most detailed part).
    static let crop = RenderStep(name: "crop") { state in
        let plan = state.plan
        guard plan.cropsSource else { return }
        let gravity = state.options.crop?.gravity ?? state.options.gravity
        let origin = gravity == .smart
            ? state.image.smartCropOrigin(width: plan.sourceCropWidth, height: plan.sourceCropHeight, strategy: .entropy)
            : plan.sourceCropOrigin
        state.image = state.image.cropped(x: origin.x, y: origin.y, width: plan.sourceCropWidth, height: plan.sourceCropHeight)
    }

    /// `scale` (with `cropToResult`): resampled once, and cut to the box.
    static let scale = RenderStep(name: "scale") { state in
        let (plan, gravity, image) = (state.plan, state.options.gravity, state.image)
        if plan.crops && Double(plan.scaledWidth) * Double(plan.scaledHeight) > Double(ProcessingOptions.intermediatePixelLimit) {
            // Resampling the whole part first would take more memory than
            // the result is worth (`rs:fill:8192:100:1` on a tall source):
            // cut the window that becomes the kept part from the source and
            // resample only that. (A `smart` crop is centred here.)
            let origin = gravity == .smart
                ? ((plan.scaledWidth - plan.width) / 2, (plan.scaledHeight - plan.height) / 2)
                : plan.cropOrigin
            let scaleX = Double(image.width) / Double(plan.scaledWidth)
            let scaleY = Double(image.height) / Double(plan.scaledHeight)
            let left = min(image.width - 1, Int(Double(origin.0) * scaleX))
            let top = min(image.height - 1, Int(Double(origin.1) * scaleY))
            let right = max(left + 1, min(image.width, Int((Double(origin.0 + plan.width) * scaleX).rounded(.up))))
            let bottom = max(top + 1, min(image.height, Int((Double(origin.1 + plan.height) * scaleY).rounded(.up))))
            state.image = image.cropped(x: left, y: top, width: right - left, height: bottom - top)
                .resized(width: plan.width, height: plan.height)
        } else if gravity == .smart && plan.crops {
            // Resampled first; then the most detailed part of that size is kept.
            state.image = image.resized(width: plan.scaledWidth, height: plan.scaledHeight)
                .cropped(to: .pixels(width: plan.width, height: plan.height), anchor: .smart(.entropy))
        } else {
            state.image = image.resized(to: plan.geometry)
        }
    }

    /// `applyFilters`: blur, sharpen, pixelate (each skipped once the deadline has passed).
    static let filters = RenderStep(name: "applyFilters") { state in
        let options = state.options
        if let blur = options.blur, blur > 0 { state.image = state.image.blurred(sigma: blur) }
        if let sharpen = options.sharpen, sharpen > 0, !WorkDeadline.currentHasPassed {
            state.image = state.image.sharpened(sigma: sharpen)
        }
        if let pixelate = options.pixelate, pixelate > 1, !WorkDeadline.currentHasPassed {
            state.image = state.image.pixelated(blockSize: pixelate)
        }
    }

    /// `extend` (and `extendAspectRatio`): the canvas the result is placed on.
    static let extend = RenderStep(name: "extend") { state in
        let plan = state.plan
        guard plan.canvasWidth != state.image.width || plan.canvasHeight != state.image.height else { return }
        let origin = plan.canvasOrigin
        state.image = state.image.placed(onWidth: plan.canvasWidth, height: plan.canvasHeight, x: origin.x, y: origin.y,
                                         background: state.options.background ?? .clear)
    }

    /// `padding`: the margins around the result.
    static let padding = RenderStep(name: "padding") { state in
        let plan = state.plan
        guard !plan.padding.isZero else { return }
        state.image = state.image.placed(onWidth: plan.resultWidth, height: plan.resultHeight, x: plan.padding.left,
                                         y: plan.padding.top, background: state.options.background ?? .clear)
    }

    /// `watermark`: the server's watermark image, drawn last (over the padding too).
    static let watermark = RenderStep(name: "watermark") { state in
        guard let placement = state.options.watermark, let mark = state.watermark else { return }
        state.image = placement.draw(mark, over: state.image, opacity: min(1, placement.opacity * state.watermarkOpacity),
                                     dpr: state.plan.effectiveDPR)
    }
}

/// What the render steps share: the image so far, the options, the
/// server's settings, and the sizes ``RenderStep/prepare`` works out.
struct RenderState {
    var image: Image
    let options: ProcessingOptions
    let maximumSide: Int
    let watermark: Image?
    let watermarkOpacity: Double
    /// The sizes, set by ``RenderStep/prepare`` (a plan of the source's size until then).
    var plan: ResizePlan
}
#endif
