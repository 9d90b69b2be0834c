#if Server
/// How many elements a renderer draws for a document once every `use` is
/// expanded: each element counts one, and a `use` counts its target's
/// whole subtree again. Ten groups of ten `use`s of the one before make
/// ten billion (the billion laughs, drawn rather than parsed); counting
/// them takes time in proportion to the document, not to the drawing.
///
/// ``SVGEventWriter`` records each element it keeps, in document order.
struct SVGInstanceCount {
    /// Each element's parent (`-1` for the root).
    private var parents: [Int] = []
    /// Each element's `use` target, the `id` after `#`, when it is a `use`.
    private var targets: [String?] = []
    /// The element of each `id` (the first one that has it).
    private var elementsByID: [String: Int] = [:]

    /// Records an element, with its parent (the index returned when that
    /// was recorded), its `id`, and its target when it is a `use` of `#id`.
    mutating func record(parent: Int?, id: String?, useTarget: String?) -> Int {
        let index = parents.count
        parents.append(parent ?? -1)
        targets.append(useTarget)
        if let id, elementsByID[id] == nil { elementsByID[id] = index }
        return index
    }

    /// The number of elements drawn from the root, counted up to `limit + 1`
    /// (a larger count is not worked out further); `nil` when a `use`
    /// refers to itself or to an element that contains it.
    func total(limit: Int) -> Int? {
        guard !parents.isEmpty else { return 0 }
        var children = [[Int]](repeating: [], count: parents.count)
        for (index, parent) in parents.enumerated() where parent >= 0 { children[parent].append(index) }
        // Each element's count, worked out after its children's and its target's, without recursion.
        var counts = [Int?](repeating: nil, count: parents.count)
        var visiting = [Bool](repeating: false, count: parents.count)
        var stack = [0]
        while let element = stack.last {
            if counts[element] != nil {
                stack.removeLast()
                continue
            }
            var dependencies = children[element]
            if let target = targets[element].flatMap({ elementsByID[$0] }) { dependencies.append(target) }
            let waiting = dependencies.filter { counts[$0] == nil }
            if waiting.isEmpty {
                var count = 1
                for dependency in dependencies { count = min(limit + 1, count + (counts[dependency] ?? 0)) }
                counts[element] = count
                visiting[element] = false
                stack.removeLast()
            } else {
                // A dependency already on the path being worked out is a cycle.
                if waiting.contains(where: { visiting[$0] }) { return nil }
                visiting[element] = true
                stack.append(contentsOf: waiting)
            }
        }
        return counts[0]
    }
}
#endif
