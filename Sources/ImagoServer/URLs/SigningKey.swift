#if Server
import Crypto
import Foundation

/// A key and salt that sign image-server paths the way imgproxy does:
/// `base64url_nopad(HMAC-SHA256(key, salt + path))`, where the path is
/// everything after the signature segment, starting with `/`, exactly as
/// sent (still percent-encoded).
///
/// ```swift
/// let key = try SigningKey(hexKey: "736563726574", hexSalt: "68656C6C6F")
/// let signature = key.signature(forPath: "/rs:fit:256:256/plain/https%3A%2F%2Fimages.example%2Fcat.jpg")
/// ```
public struct SigningKey: Sendable, Hashable {
    /// The HMAC key.
    public let key: [UInt8]
    /// The salt put before the path.
    public let salt: [UInt8]

    /// The error for a key or salt that is not hexadecimal.
    public struct InvalidHex: Error, Sendable, Equatable, CustomStringConvertible {
        /// Which value was wrong: `"key"` or `"salt"`.
        public let name: String
        public var description: String { "the \(name) is not an even number of hexadecimal digits" }
    }

    /// Creates a key from raw bytes.
    public init(key: [UInt8], salt: [UInt8]) {
        self.key = key
        self.salt = salt
    }

    /// Creates a key from hexadecimal strings, as `IMAGO_KEY` and `IMAGO_SALT` hold them.
    ///
    /// - Throws: ``InvalidHex`` when either is empty or not hexadecimal.
    public init(hexKey: String, hexSalt: String) throws {
        guard let key = Self.bytes(hex: hexKey), !key.isEmpty else { throw InvalidHex(name: "key") }
        guard let salt = Self.bytes(hex: hexSalt) else { throw InvalidHex(name: "salt") }
        self.init(key: key, salt: salt)
    }

    /// The length of an HMAC-SHA256 digest, the longest signature: 32 bytes.
    public static let digestSize = SHA256.byteCount

    /// The signature of `path` (everything after the signature segment, starting with `/`),
    /// the digest cut to its first `size` bytes (imgproxy's `IMGPROXY_SIGNATURE_SIZE`).
    public func signature(forPath path: some StringProtocol, size: Int = Self.digestSize) -> String {
        Self.base64URL(Data(digest(forPath: path).prefix(max(1, min(size, Self.digestSize)))))
    }

    /// Whether `signature` signs `path`, compared in constant time.
    ///
    /// A signature has one spelling only: unpadded base64url of exactly
    /// `size` bytes (32 unless cut with `IMGPROXY_SIGNATURE_SIZE`), with
    /// the unused bits of its last character zero. Padding, other
    /// lengths and other alphabets are refused, so no cache downstream
    /// can be given one signature under many keys.
    public func isValid(signature: some StringProtocol, forPath path: some StringProtocol, size: Int = Self.digestSize) -> Bool {
        let size = max(1, min(size, Self.digestSize))
        guard let given = Self.data(canonicalBase64URL: signature), given.count == size else { return false }
        let expected = Array(digest(forPath: path).prefix(size))
        // Constant time: every byte is compared whatever the first difference.
        var difference: UInt8 = 0
        for (left, right) in zip(given, expected) { difference |= left ^ right }
        return difference == 0
    }

    private func digest(forPath path: some StringProtocol) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: salt + Array(path.utf8), using: SymmetricKey(data: key)))
    }

    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(ofHexDigit: digits[index]), let low = value(ofHexDigit: digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func value(ofHexDigit digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Base64url without padding.
    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes the one spelling ``base64URL(_:)`` writes: unpadded
    /// base64url whose last character carries no stray bits; `nil` for
    /// anything else (padding, `+` or `/`, a length no byte count gives).
    static func data(canonicalBase64URL text: some StringProtocol) -> Data? {
        guard !text.utf8.contains(UInt8(ascii: "=")), let data = data(base64URL: text),
              base64URL(data).utf8.elementsEqual(text.utf8) else { return nil }
        return data
    }

    /// Decodes base64url, with or without padding; `nil` for anything else.
    static func data(base64URL text: some StringProtocol) -> Data? {
        var standard = String(text)
        guard standard.utf8.allSatisfy({ byte in
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: "=")
        }) else { return nil }
        standard = standard.replacingOccurrences(of: "=", with: "")
            .replacingOccurrences(of: "-", with: "+")
            .replacingOccurrences(of: "_", with: "/")
        guard standard.utf8.count % 4 != 1 else { return nil }
        standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        return Data(base64Encoded: standard)
    }
}
#endif
