#if Server
import Foundation

/// How much filter work an SVG document may ask for, checked while it is
/// sanitised (``SVGSanitizer/filterBudget``), before anything draws it:
/// filters are where a small document costs a renderer the most (an
/// `feConvolveMatrix` of order 30 makes librsvg panic; `feTurbulence` at
/// many octaves or thousands of chained primitives keep it busy for
/// seconds). A document over any limit is refused with
/// ``SVGSanitizingError/overBudget(_:)``.
///
/// The rasterizer's deadline (``SVGRasterizerProcess/timeout``) still
/// bounds what this cannot see (a filter drawn many times through `use`,
/// or scaled up by a transform).
public struct SVGFilterBudget: Sendable, Hashable {
    /// How many `filter` elements a document may have. Default: 64.
    public var maximumFilterCount: Int
    /// How many filter primitives (`fe...` elements other than transfer
    /// functions, merge nodes and light sources) a document may have, all
    /// filters together. Default: 128.
    public var maximumPrimitiveCount: Int
    /// How many elements may have a filter applied (a `filter` attribute,
    /// or a `filter` declaration in a `style` attribute). Default: 256.
    public var maximumFilteredElementCount: Int
    /// The largest `order` of an `feConvolveMatrix`, on each axis. Default: 9.
    public var maximumConvolveOrder: Int
    /// The largest `numOctaves` of an `feTurbulence`. Default: 10 (more add
    /// nothing an 8-bit channel can show).
    public var maximumTurbulenceOctaves: Int
    /// The largest `stdDeviation` of an `feGaussianBlur` or `feDropShadow`
    /// and `radius` of an `feMorphology`, in user units, as a fraction of
    /// the canvas's larger side (its `viewBox`, else its `width` and
    /// `height`, else 300x150). Default: 1 (a blur as wide as the canvas).
    public var maximumExtentPerCanvasSide: Double
    /// The largest `stdDeviation` or `radius` whatever the canvas. Default: 2,048.
    public var maximumExtent: Double

    /// Creates a budget with the defaults above.
    public init(maximumFilterCount: Int = 64, maximumPrimitiveCount: Int = 128, maximumFilteredElementCount: Int = 256,
                maximumConvolveOrder: Int = 9, maximumTurbulenceOctaves: Int = 10,
                maximumExtentPerCanvasSide: Double = 1, maximumExtent: Double = 2048) {
        self.maximumFilterCount = maximumFilterCount
        self.maximumPrimitiveCount = maximumPrimitiveCount
        self.maximumFilteredElementCount = maximumFilteredElementCount
        self.maximumConvolveOrder = maximumConvolveOrder
        self.maximumTurbulenceOctaves = maximumTurbulenceOctaves
        self.maximumExtentPerCanvasSide = maximumExtentPerCanvasSide
        self.maximumExtent = maximumExtent
    }
}

/// A document's filter work counted against an ``SVGFilterBudget``, one
/// kept element at a time, by ``SVGEventWriter``.
struct SVGFilterBudgetCount {
    /// Elements named `fe...` that are not primitives of their own.
    static let primitiveChildren: Set<String> = [
        "fefuncr", "fefuncg", "fefuncb", "fefunca", "femergenode", "fedistantlight", "fepointlight", "fespotlight",
    ]

    let budget: SVGFilterBudget
    private var filters = 0
    private var primitives = 0
    private var filtered = 0
    /// The canvas's larger side in user units, once the root is seen.
    private var canvasSide = 300.0

    init(budget: SVGFilterBudget) {
        self.budget = budget
    }

    /// Reads the canvas's size from the root's attributes (local names).
    mutating func root(_ attributes: [String: String]) {
        if let box = attributes["viewBox"].map(Self.numbers), box?.count == 4, let box, box[2] > 0, box[3] > 0 {
            canvasSide = max(box[2], box[3])
        } else {
            let width = attributes["width"].flatMap { Self.numbers($0)?.first } ?? 300
            let height = attributes["height"].flatMap { Self.numbers($0)?.first } ?? 150
            canvasSide = max(width, height, 1)
        }
    }

    /// Counts one kept element in the SVG namespace (its local name lower-cased,
    /// its attributes by local name); the reason when it goes over the budget.
    mutating func count(_ name: String, attributes: [String: String]) -> String? {
        if attributes["filter"].map({ $0.lowercased().contains("url") }) == true
            || attributes["style"].map({ $0.lowercased().contains("filter") || $0.contains("\\") }) == true {
            filtered += 1
            if filtered > budget.maximumFilteredElementCount {
                return "more than \(budget.maximumFilteredElementCount) elements have a filter"
            }
        }
        if name == "filter" {
            filters += 1
            if filters > budget.maximumFilterCount { return "more than \(budget.maximumFilterCount) filters" }
            return nil
        }
        guard name.hasPrefix("fe"), !Self.primitiveChildren.contains(name) else { return nil }
        primitives += 1
        if primitives > budget.maximumPrimitiveCount { return "more than \(budget.maximumPrimitiveCount) filter primitives" }
        switch name {
        case "feconvolvematrix":
            let order = attributes["order"].map(Self.numbers) ?? [3]
            guard let order, (1...2).contains(order.count),
                  order.allSatisfy({ $0 >= 1 && $0 <= Double(budget.maximumConvolveOrder) && $0.rounded() == $0 }) else {
                return "an feConvolveMatrix order of \(attributes["order"]?.prefix(40) ?? ""), over \(budget.maximumConvolveOrder) or not one or two whole numbers"
            }
            let kernel = attributes["kernelMatrix"].map(Self.numbers) ?? []
            guard let kernel, kernel.count <= budget.maximumConvolveOrder * budget.maximumConvolveOrder else {
                return "an feConvolveMatrix kernel that does not read or is over \(budget.maximumConvolveOrder)x\(budget.maximumConvolveOrder)"
            }
        case "feturbulence":
            if let octaves = attributes["numOctaves"] {
                let value = octaves.trimmingCharacters(in: .whitespacesAndNewlines)
                guard !value.isEmpty, value.allSatisfy(\.isASCIIDigit), let count = Int(value.prefix(9)), value.count <= 9,
                      count <= budget.maximumTurbulenceOctaves else {
                    return "an feTurbulence of \(octaves.prefix(40)) octaves, over \(budget.maximumTurbulenceOctaves) or not a whole number"
                }
            }
        case "fegaussianblur", "fedropshadow":
            if let reason = checkExtent(attributes["stdDeviation"], of: "stdDeviation") { return reason }
        case "femorphology":
            if let reason = checkExtent(attributes["radius"], of: "radius") { return reason }
        default:
            break
        }
        return nil
    }

    /// The reason an extent (`stdDeviation`, `radius`) is over the budget, or `nil`.
    private func checkExtent(_ value: String?, of name: String) -> String? {
        guard let value else { return nil }
        let limit = min(budget.maximumExtent, canvasSide * budget.maximumExtentPerCanvasSide)
        guard let numbers = Self.numbers(value), (1...2).contains(numbers.count), numbers.allSatisfy({ $0 >= 0 && $0 <= limit }) else {
            return "a \(name) of \(value.prefix(40)), over \(limit) for this canvas or not one or two numbers"
        }
        return nil
    }

    /// The numbers of a list separated by whitespace or commas, or `nil` when one is not a finite number.
    static func numbers(_ text: String) -> [Double]? {
        let parts = text.split { $0 == "," || $0.isWhitespace }
        var result: [Double] = []
        for part in parts {
            guard part.count <= 32, let value = Double(part), value.isFinite else { return nil }
            result.append(value)
        }
        return result
    }
}

private extension Character {
    /// Whether this is `0` to `9`.
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
#endif
