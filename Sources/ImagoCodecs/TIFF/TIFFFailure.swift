import CTiff

/// Every way a libtiff call can fail. ``CodecError/libtiff(_:)`` is the one
/// place these become ``CodecError`` values (decoder and encoder alike).
enum TIFFFailure {
    /// A call failed: its name and libtiff's first error message for it.
    case call(_ name: String, message: String)
    /// The file is one libtiff opens but cannot turn into RGBA (its
    /// `TIFFRGBAImageOK` message), or a field Imago refuses.
    case unsupported(_ message: String)
}

extension CodecError {
    /// The library name used in every libtiff error.
    static let libtiffName = "libtiff"

    /// Maps a libtiff failure to a codec error: code 1 for a failed call,
    /// 2 for an image libtiff cannot convert, with libtiff's message.
    static func libtiff(_ failure: TIFFFailure) -> CodecError {
        let (code, message): (Int, String) = switch failure {
        case .call(let name, let message): (1, "\(name) failed: \(message)")
        case .unsupported(let message): (2, message)
        }
        return CodecError(library: libtiffName, code: code, message: message)
    }
}

/// Reading and writing the fields of a libtiff handle through libtiff's
/// `va_list` entry points (Swift cannot call the variadic ones).
enum TIFFFields {
    /// The value of `tag`, or its default with `defaulted`; `nil` when the
    /// directory has none.
    static func get<Value>(_ handle: OpaquePointer, _ tag: Int32, defaulted: Bool = true, as _: Value.Type) -> Value? {
        let value = UnsafeMutablePointer<Value>.allocate(capacity: 2)   // room for libtiff's widest writes
        defer { value.deallocate() }
        UnsafeMutableRawPointer(value).initializeMemory(as: UInt8.self, repeating: 0, count: 2 * MemoryLayout<Value>.stride)
        let found = withVaList([value]) { arguments in
            defaulted ? TIFFVGetFieldDefaulted(handle, UInt32(tag), arguments) : TIFFVGetField(handle, UInt32(tag), arguments)
        }
        return found == 1 ? value.pointee : nil
    }

    /// A field given as a count and a pointer (`TIFFTAG_EXTRASAMPLES`,
    /// `TIFFTAG_ICCPROFILE`): the pointer and the count; `nil` when absent.
    static func array<Count: BinaryInteger>(_ handle: OpaquePointer, _ tag: Int32, count _: Count.Type) -> (UnsafeRawPointer, Int)? {
        var count: Count = 0
        var pointer: UnsafeRawPointer?
        let found = withUnsafeMutablePointer(to: &count) { count in
            withUnsafeMutablePointer(to: &pointer) { pointer in
                withVaList([count, pointer]) { TIFFVGetField(handle, UInt32(tag), $0) }
            }
        }
        guard found == 1, let pointer else { return nil }
        return (pointer, Int(count))
    }

    /// Sets `tag` to `arguments` (each as C's variadic calls pass it:
    /// `Int32` for 16-bit fields, `UInt32` for 32-bit ones, pointers).
    static func set(_ handle: OpaquePointer, _ tag: Int32, _ arguments: any CVarArg...) throws {
        guard withVaList(arguments, { TIFFVSetField(handle, UInt32(tag), $0) }) == 1 else {
            throw CodecError.libtiff(.call("TIFFSetField(\(tag))", message: "refused"))
        }
    }
}
