/// Why librsvg and cairo made no drawing.
package enum SVGDrawingFailure: Error, Sendable, Hashable {
    /// The size is over the pixel limit or cairo's side; nothing was allocated.
    case tooLarge(width: Int, height: Int, limit: Int)
    /// librsvg could not read the document.
    case couldNotLoad(String)
    /// librsvg or cairo could not draw it.
    case couldNotRender(String)
    /// cairo could not allocate the surface.
    case outOfMemory(String)
    /// The request was not one the rasteriser reads (or this build has no librsvg).
    case badRequest(String)
}

/// What the server and `imago-svg-rasterizer` say to each other over the
/// child's standard input and output (one socket), integers little-endian:
///
/// 1. server: ``magic``, the pixel limit (8 bytes), the document's length
///    (8 bytes), the document (a sanitised SVG);
/// 2. child: `S`, width and height (4 bytes each), or a failure;
/// 3. server: the width and height to draw at (4 bytes each; 0 and 0 stop);
/// 4. child: `P` and width x height x 4 bytes of straight RGBA, or a failure.
///
/// A failure is `E`, its kind (1 byte), width, height and limit (8 bytes
/// each, for ``SVGDrawingFailure/tooLarge(width:height:limit:)``), the
/// message's length (4 bytes, at most ``maximumMessageLength``) and the
/// message in UTF-8.
package enum SVGRasterizerWire {
    /// The request's first four bytes: the protocol and its version.
    package static let magic: [UInt8] = Array("ISV1".utf8)
    /// The request's bytes before the document.
    package static let requestHeaderLength = 20
    /// The longest failure message sent.
    package static let maximumMessageLength = 1024
    /// A failure's bytes after `E`, before its message.
    package static let failureHeaderLength = 29
    /// The tags that start a reply.
    package static let sizeTag = UInt8(ascii: "S"), pixelsTag = UInt8(ascii: "P"), failureTag = UInt8(ascii: "E")

    /// The request's header for a document of `documentLength` bytes.
    package static func requestHeader(maximumPixelCount: Int, documentLength: Int) -> [UInt8] {
        magic + bytes(UInt64(maximumPixelCount)) + bytes(UInt64(documentLength))
    }

    /// The pixel limit and the document's length, or `nil` when `header` is not a request's.
    package static func parseRequestHeader(_ header: [UInt8]) -> (maximumPixelCount: Int, documentLength: Int)? {
        guard header.count == requestHeaderLength, Array(header[0..<4]) == magic else { return nil }
        let limit = integer(header[4..<12]), length = integer(header[12..<20])
        guard limit <= UInt64(Int.max), length <= UInt64(Int32.max) else { return nil }
        return (Int(limit), Int(length))
    }

    /// The size reply.
    package static func sizeReply(width: Int, height: Int) -> [UInt8] {
        [sizeTag] + bytes(UInt32(width)) + bytes(UInt32(height))
    }

    /// A width and height (a size reply's after its tag, or the server's target).
    package static func size(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        guard bytes.count == 8 else { return nil }
        return (Int(integer(bytes[0..<4])), Int(integer(bytes[4..<8])))
    }

    /// The server's target size.
    package static func target(width: Int, height: Int) -> [UInt8] {
        bytes(UInt32(width)) + bytes(UInt32(height))
    }

    /// The failure reply for `failure`.
    package static func failureReply(_ failure: SVGDrawingFailure) -> [UInt8] {
        let (kind, width, height, limit, message): (UInt8, Int, Int, Int, String) = switch failure {
        case .couldNotLoad(let message): (1, 0, 0, 0, message)
        case .couldNotRender(let message): (2, 0, 0, 0, message)
        case .tooLarge(let width, let height, let limit): (3, width, height, limit, "")
        case .outOfMemory(let message): (4, 0, 0, 0, message)
        case .badRequest(let message): (5, 0, 0, 0, message)
        }
        let text = Array(message.utf8.prefix(maximumMessageLength))
        return [failureTag, kind] + bytes(UInt64(max(0, width))) + bytes(UInt64(max(0, height))) + bytes(UInt64(max(0, limit)))
            + bytes(UInt32(text.count)) + text
    }

    /// The message's length from a failure's header (the bytes after `E`), or `nil` when too long.
    package static func messageLength(ofFailureHeader header: [UInt8]) -> Int? {
        guard header.count == failureHeaderLength else { return nil }
        let length = Int(integer(header[25..<29]))
        return length <= maximumMessageLength ? length : nil
    }

    /// The failure a header (the bytes after `E`) and its message say, or `nil` for an unknown kind.
    package static func failure(header: [UInt8], message: [UInt8]) -> SVGDrawingFailure? {
        guard header.count == failureHeaderLength else { return nil }
        let text = String(decoding: message, as: UTF8.self)
        let clamp = { (value: UInt64) in Int(min(value, UInt64(Int32.max))) }
        switch header[0] {
        case 1: return .couldNotLoad(text)
        case 2: return .couldNotRender(text)
        case 3: return .tooLarge(width: clamp(integer(header[1..<9])), height: clamp(integer(header[9..<17])),
                                 limit: clamp(integer(header[17..<25])))
        case 4: return .outOfMemory(text)
        case 5: return .badRequest(text)
        default: return nil
        }
    }

    /// `value`'s bytes, little-endian.
    private static func bytes<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        (0..<(T.bitWidth / 8)).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
    }

    /// A little-endian integer from `bytes`.
    private static func integer(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }
}
