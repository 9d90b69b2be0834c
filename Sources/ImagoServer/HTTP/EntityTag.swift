#if Server
/// `If-None-Match` as RFC 9110 reads it: a list of entity tags, or `*`,
/// compared weakly (a `W/` prefix on either side is ignored).
enum EntityTag {
    /// Whether `ifNoneMatch` (every field line, joined with commas) matches `etag`.
    static func matches(_ ifNoneMatch: String?, etag: String) -> Bool {
        guard let ifNoneMatch else { return false }
        let wanted = opaque(etag)
        for item in list(ifNoneMatch) {
            if item == "*" || opaque(item) == wanted { return true }
        }
        return false
    }

    /// The tags in a list, split on commas outside quotes.
    private static func list(_ value: String) -> [Substring] {
        var items: [Substring] = []
        var start = value.startIndex
        var quoted = false
        var index = value.startIndex
        while index < value.endIndex {
            let character = value[index]
            if character == "\"" { quoted.toggle() }
            if character == ",", !quoted {
                items.append(value[start..<index])
                start = value.index(after: index)
            }
            index = value.index(after: index)
        }
        items.append(value[start...])
        return items.map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
    }

    /// The quoted part of a tag, without `W/`.
    private static func opaque(_ tag: some StringProtocol) -> Substring {
        let tag = Substring(tag)
        return tag.hasPrefix("W/") ? tag.dropFirst(2) : tag
    }
}

extension Substring {
    func trimmingWhitespace() -> Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result = result.dropFirst() }
        while let last = result.last, last == " " || last == "\t" { result = result.dropLast() }
        return result
    }
}
#endif
