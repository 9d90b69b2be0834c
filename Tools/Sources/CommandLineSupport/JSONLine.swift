import Foundation

/// A JSON value written with its keys in the order given, so every line of
/// `--json` output reads the same way.
public enum JSONValue {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case null
    case object([(String, JSONValue)])

    /// The compact JSON text.
    public var text: String {
        switch self {
        case .string(let value): Self.quote(value)
        case .int(let value): String(value)
        case .double(let value): value.isFinite ? String(format: "%.3f", value) : "null"
        case .bool(let value): value ? "true" : "false"
        case .null: "null"
        case .object(let members): "{" + members.map { "\(Self.quote($0.0)): \($0.1.text)" }.joined(separator: ", ") + "}"
        }
    }

    private static func quote(_ string: String) -> String {
        var out = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
