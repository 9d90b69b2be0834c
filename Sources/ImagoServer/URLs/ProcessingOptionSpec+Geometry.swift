#if Server
import Foundation
import Imago

extension ProcessingOptionSpec {
    /// imgproxy's processing options, in the order a path writes them.
    package static let table: [ProcessingOptionSpec] = geometry + effects + delivery

    /// Size, placement, cropping and turning.
    static let geometry: [ProcessingOptionSpec] = [
        .init(["resize", "rs"], arity: 1...8, example: "rs:fill:300:200:1", read: { options, a throws(ImageServerError) in
            if let type = a.argument(0) { options.resizingType = try OptionValue.resizingType(type) }
            try readSize(&options, a, from: 1)
        }, write: { o in
            o.resizingType != .fit || o.width != 0 || o.height != 0 || o.enlarge
                ? "rs:\(o.resizingType.rawValue):\(o.width):\(o.height):\(o.enlarge ? 1 : 0)" : nil
        }),
        .init(["size", "s"], arity: 1...7, example: "s:300:200", read: { options, a throws(ImageServerError) in try readSize(&options, a, from: 0) }),
        .init(["resizing_type", "rt"], arity: 1...1, example: "rt:fill", read: { options, a throws(ImageServerError) in
            options.resizingType = try OptionValue.resizingType(a[0])
        }),
        .init(["width", "w"], arity: 1...1, example: "w:300", read: { options, a throws(ImageServerError) in
            options.width = try OptionValue.side(a[0], "width")
        }),
        .init(["height", "h"], arity: 1...1, example: "h:200", read: { options, a throws(ImageServerError) in
            options.height = try OptionValue.side(a[0], "height")
        }),
        .init(["enlarge", "el"], arity: 1...1, example: "el:1", read: { options, a throws(ImageServerError) in
            options.enlarge = try OptionValue.boolean(a[0], "enlarge")
        }),
        .init(["gravity", "g"], arity: nil, example: "g:soea:5:7", read: { options, a throws(ImageServerError) in
            (options.gravity, options.gravityOffset) = try OptionValue.gravity(a.values[...], current: options.gravityOffset, allowsSmart: true)
        }, write: { o in
            o.gravity != .center || o.gravityOffset != .zero ? "g:" + OptionValue.gravityArguments(o.gravity, o.gravityOffset) : nil
        }),
        .init(["min-width", "mw"], arity: 1...1, example: "mw:100", read: { options, a throws(ImageServerError) in
            options.minWidth = try OptionValue.side(a[0], "min-width")
        }, write: { o in o.minWidth != 0 ? "mw:\(o.minWidth)" : nil }),
        .init(["min-height", "mh"], arity: 1...1, example: "mh:100", read: { options, a throws(ImageServerError) in
            options.minHeight = try OptionValue.side(a[0], "min-height")
        }, write: { o in o.minHeight != 0 ? "mh:\(o.minHeight)" : nil }),
        .init(["zoom", "z"], arity: 1...2, example: "z:1.5:2", read: { options, a throws(ImageServerError) in
            options.zoomX = try OptionValue.positive(a[0], "zoom")
            options.zoomY = a.count == 2 ? try OptionValue.positive(a[1], "zoom") : options.zoomX
        }, write: { o in o.zoomX != 1 || o.zoomY != 1 ? "z:\(OptionValue.number(o.zoomX)):\(OptionValue.number(o.zoomY))" : nil }),
        .init(["dpr"], arity: 1...1, example: "dpr:2", read: { options, a throws(ImageServerError) in
            options.dpr = try OptionValue.positive(a[0], "dpr")
        }, write: { o in o.dpr != 1 ? "dpr:\(OptionValue.number(o.dpr))" : nil }),
        .init(["extend", "ex"], arity: 1...4, example: "ex:1:no:5:5", read: { options, a throws(ImageServerError) in
            options.extend = try OptionValue.placement(a.values, name: "extend", current: options.extend)
        }, write: { o in o.extend.map { "ex:1:" + OptionValue.gravityArguments($0.gravity, $0.offset) } }),
        .init(["extend_aspect_ratio", "extend_ar", "exar"], arity: 1...4, example: "exar:1:so", read: { options, a throws(ImageServerError) in
            options.extendAspectRatio = try OptionValue.placement(a.values, name: "extend_aspect_ratio", current: options.extendAspectRatio)
        }, write: { o in o.extendAspectRatio.map { "exar:1:" + OptionValue.gravityArguments($0.gravity, $0.offset) } }),
        .init(["crop", "c"], arity: 1...5, example: "c:0.5:120:fp:0.8:0.3", read: { options, a throws(ImageServerError) in
            // Arguments left out keep the earlier crop's (a preset's, say).
            var crop = options.crop ?? ProcessingOptions.Crop(width: 0, height: 0)
            crop.width = try OptionValue.cropSide(a[0], "width")
            if a.count > 1 { crop.height = try OptionValue.cropSide(a[1], "height") }
            if a.count > 2 { (crop.gravity, crop.offset) = try OptionValue.gravity(a.values[2...], current: .zero, allowsSmart: true) }
            options.crop = crop.width == 0 && crop.height == 0 ? nil : crop
        }, write: { o in
            o.crop.map { crop in
                "c:\(OptionValue.number(crop.width)):\(OptionValue.number(crop.height))"
                    + (crop.gravity.map { ":" + OptionValue.gravityArguments($0, crop.offset) } ?? "")
            }
        }),
        .init(["padding", "pd"], arity: 1...4, example: "pd:1:2:3:4", read: { options, a throws(ImageServerError) in
            var padding = options.padding
            var sides: [Int?] = []
            for index in 0..<4 { sides.append(try a.argument(index).map { text throws(ImageServerError) in try OptionValue.side(text, "padding") }) }
            if let top = sides[0] { padding.top = top }
            if let right = sides[1] { padding.right = right } else if sides[0] != nil { padding.right = padding.top }
            if let bottom = sides[2] { padding.bottom = bottom } else if sides[0] != nil { padding.bottom = padding.top }
            if let left = sides[3] { padding.left = left } else if sides[0] != nil || sides[1] != nil { padding.left = padding.right }
            options.padding = padding
        }, write: { o in
            o.padding != .zero ? "pd:\(o.padding.top):\(o.padding.right):\(o.padding.bottom):\(o.padding.left)" : nil
        }),
        .init(["trim", "t"], arity: 1...4, example: "t:10:ff00ff:1:0", read: { options, a throws(ImageServerError) in
            guard !a[0].isEmpty else {
                options.trim = nil
                return
            }
            guard let threshold = Double(a[0]), threshold.isFinite, (0...255).contains(threshold) else {
                throw OptionValue.bad("trim's threshold must be a number from 0 to 255, not \"\(a[0].prefix(20))\"")
            }
            var trim = options.trim ?? ProcessingOptions.Trim(threshold: threshold)
            trim.threshold = threshold
            if a.count > 1 { trim.color = a[1].isEmpty ? nil : try OptionValue.background([a[1]]) }
            if let equal = a.argument(2) { trim.equalHorizontal = try OptionValue.boolean(equal, "trim") }
            if let equal = a.argument(3) { trim.equalVertical = try OptionValue.boolean(equal, "trim") }
            options.trim = trim
        }, write: { o in
            o.trim.map { trim in
                let color = trim.color.map { String(format: "%02x%02x%02x", $0.red, $0.green, $0.blue) } ?? ""
                return "t:\(OptionValue.number(trim.threshold)):\(color):\(trim.equalHorizontal ? 1 : 0):\(trim.equalVertical ? 1 : 0)"
            }
        }),
        .init(["rotate", "rot"], arity: 1...1, example: "rot:90", read: { options, a throws(ImageServerError) in
            guard let angle = Int(a[0]), angle % 90 == 0 else {
                throw OptionValue.bad("rotate must be a multiple of 90, not \"\(a[0].prefix(20))\"")
            }
            options.rotation = (angle % 360 + 360) % 360
        }, write: { o in o.rotation != 0 ? "rot:\(o.rotation)" : nil }),
        .init(["flip", "fl"], arity: 1...2, example: "fl:1:1", read: { options, a throws(ImageServerError) in
            if let horizontal = a.argument(0) { options.flipsHorizontally = try OptionValue.boolean(horizontal, "flip") }
            if let vertical = a.argument(1) { options.flipsVertically = try OptionValue.boolean(vertical, "flip") }
        }, write: { o in
            o.flipsHorizontally || o.flipsVertically ? "fl:\(o.flipsHorizontally ? 1 : 0):\(o.flipsVertically ? 1 : 0)" : nil
        }),
        .init(["background", "bg"], arity: nil, example: "bg:10:20:30", read: { options, a throws(ImageServerError) in
            options.background = try OptionValue.background(a.values)
        }, write: { o in o.background.map { "bg:\($0.red):\($0.green):\($0.blue)" } }),
        .init(["max_result_dimension", "mrd"], arity: 1...1, security: true, example: "mrd:500", read: { options, a throws(ImageServerError) in
            guard let size = Int(a[0]) else {
                throw OptionValue.bad("max_result_dimension must be a whole number, not \"\(a[0].prefix(20))\"")
            }
            options.maximumResultDimension = size > 0 ? size : nil
        }, write: { o in o.maximumResultDimension.map { "mrd:\($0)" } }),
        .init(["max_src_resolution", "msr"], arity: 1...1, security: true, example: "msr:12.5", read: { options, a throws(ImageServerError) in
            options.maximumSourcePixels = try OptionValue.megapixels(a[0], "max_src_resolution")
        }, write: { o in o.maximumSourcePixels.map { "msr:\(OptionValue.number(Double($0) / 1_000_000))" } }),
        .init(["max_src_file_size", "msfs"], arity: 1...1, security: true, example: "msfs:1048576", read: { options, a throws(ImageServerError) in
            guard let bytes = Int(a[0]) else {
                throw OptionValue.bad("max_src_file_size must be a whole number, not \"\(a[0].prefix(20))\"")
            }
            options.maximumSourceBytes = bytes > 0 ? bytes : nil
        }, write: { o in o.maximumSourceBytes.map { "msfs:\($0)" } }),
        .init(["max_animation_frames", "maf"], arity: 1...1, security: true, example: "maf:10", read: { options, a throws(ImageServerError) in
            guard let frames = Int(a[0]), frames > 0 else {
                throw OptionValue.bad("max_animation_frames must be a whole number above 0, not \"\(a[0].prefix(20))\"")
            }
            options.maximumAnimationFrames = frames
        }, write: { o in o.maximumAnimationFrames.map { "maf:\($0)" } }),
        .init(["max_animation_frame_resolution", "mafr"], arity: 1...1, security: true, example: "mafr:1.5", read: { options, a throws(ImageServerError) in
            options.maximumAnimationFramePixels = try OptionValue.megapixels(a[0], "max_animation_frame_resolution")
        }, write: { o in o.maximumAnimationFramePixels.map { "mafr:\(OptionValue.number(Double($0) / 1_000_000))" } }),
    ]

    /// `W:H:ENLARGE:EXTEND…` from argument `first` on: shared by `resize` and `size`.
    static func readSize(_ options: inout ProcessingOptions, _ a: OptionArguments, from first: Int) throws(ImageServerError) {
        if let width = a.argument(first) { options.width = try OptionValue.side(width, "width") }
        if let height = a.argument(first + 1) { options.height = try OptionValue.side(height, "height") }
        if let enlarge = a.argument(first + 2) { options.enlarge = try OptionValue.boolean(enlarge, "enlarge") }
        if a.argument(first + 3) != nil {
            options.extend = try OptionValue.placement(Array(a.values[(first + 3)...]), name: "extend", current: options.extend)
        }
    }
}
#endif
