extension Sequence<UInt8> {
    /// The bytes as lower-case hex digits, two per byte: digests in file
    /// names and ETags. (`String(format: "%02x")` costs about a microsecond
    /// per byte on Linux; this costs a few nanoseconds.)
    package var lowercaseHex: String {
        let bytes = Array(self)
        return String(unsafeUninitializedCapacity: bytes.count * 2) { output in
            for (index, byte) in bytes.enumerated() {
                output[2 * index] = Self.hexDigit(byte >> 4)
                output[2 * index + 1] = Self.hexDigit(byte & 0x0F)
            }
            return bytes.count * 2
        }
    }

    /// `0`-`9`, `a`-`f` for 0...15.
    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }
}
