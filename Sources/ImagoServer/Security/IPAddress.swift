#if Server
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 address, as the source guard sees the addresses a host
/// resolves to, with the ranges an image server must never fetch from.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address's bytes: 4 for IPv4, 16 for IPv6.
    public let bytes: [UInt8]

    /// An address from its bytes; `nil` unless there are 4 or 16.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// Parses a literal (`192.0.2.1`, `2001:db8::1`, `[::1]`) in the strict
    /// dotted-quad or RFC 4291 form; `nil` for anything else, host names included.
    public init?(_ literal: String) {
        var text = literal
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self.bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            self.bytes = withUnsafeBytes(of: &v6) { Array($0) }
            return
        }
        return nil
    }

    /// Whether it is an IPv4 address.
    public var isIPv4: Bool { bytes.count == 4 }

    public var description: String {
        if isIPv4 { return bytes.map(String.init).joined(separator: ".") }
        var storage = in6_addr()
        withUnsafeMutableBytes(of: &storage) { $0.copyBytes(from: bytes) }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &storage, &buffer, socklen_t(buffer.count)) != nil else { return "<IPv6>" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The name of the non-public range the address is in (`loopback`,
    /// `private`, `link-local`, `multicast`, `unspecified`, `shared (CGNAT)`,
    /// `reserved`), or `nil` for a public address. An IPv6 address that
    /// carries an IPv4 one is judged by the IPv4 address inside: mapped,
    /// compatible, NAT64 (`64:ff9b::/96`, and the local-use `64:ff9b:1::/48`
    /// of RFC 8215 in either of RFC 6052's layouts), 6to4, Teredo (the
    /// client's address, inverted in the last 32 bits) and ISATAP (an
    /// interface identifier `0000:5efe` or `0200:5efe` and the address).
    public var nonPublicRange: String? {
        isIPv4 ? Self.range(ofIPv4: bytes) : Self.range(ofIPv6: bytes)
    }

    private static func range(ofIPv4 b: [UInt8]) -> String? {
        switch (b[0], b[1], b[2]) {
        case (0, _, _): "unspecified"
        case (127, _, _): "loopback"
        case (10, _, _), (172, 16...31, _), (192, 168, _): "private"
        case (100, 64...127, _): "shared (CGNAT)"
        case (169, 254, _): "link-local"
        case (224...239, _, _): "multicast"
        case (240...255, _, _): "reserved"            // 255.255.255.255 included
        case (192, 0, 0), (198, 18...19, _): "reserved"
        default: nil
        }
    }

    private static func range(ofIPv6 b: [UInt8]) -> String? {
        let firstTen = b[0..<10].allSatisfy { $0 == 0 }
        if b.allSatisfy({ $0 == 0 }) { return "unspecified" }
        if b[0..<15].allSatisfy({ $0 == 0 }) && b[15] == 1 { return "loopback" }
        // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d).
        if firstTen && ((b[10] == 0xFF && b[11] == 0xFF) || (b[10] == 0 && b[11] == 0)) {
            return range(ofIPv4: Array(b[12..<16]))
        }
        // NAT64 (64:ff9b::/96).
        if b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xFF && b[3] == 0x9B && b[4..<12].allSatisfy({ $0 == 0 }) {
            return range(ofIPv4: Array(b[12..<16]))
        }
        // NAT64 local-use (64:ff9b:1::/48, RFC 8215): the IPv4 address in
        // the last 32 bits (a /96 inside it), or in RFC 6052's /48 layout
        // (bytes 6, 7, 9 and 10; byte 8 is zero); both when unclear.
        if b[0..<6] == [0x00, 0x64, 0xFF, 0x9B, 0x00, 0x01] {
            let in96 = Array(b[12..<16]), in48 = [b[6], b[7], b[9], b[10]]
            if b[6..<12].allSatisfy({ $0 == 0 }) { return range(ofIPv4: in96) }
            if b[8] == 0 && b[11..<16].allSatisfy({ $0 == 0 }) { return range(ofIPv4: in48) }
            return range(ofIPv4: in96) ?? range(ofIPv4: in48)
        }
        // 6to4 (2002::/16) carries an IPv4 address in bytes 2 to 5.
        if b[0] == 0x20 && b[1] == 0x02 { return range(ofIPv4: Array(b[2..<6])) }
        // Teredo (2001::/32): the client's address, each bit inverted, in the last 32 bits.
        if b[0..<4] == [0x20, 0x01, 0x00, 0x00] { return range(ofIPv4: b[12..<16].map { ~$0 }) }
        // ISATAP: any prefix, with an interface identifier of 0000:5efe or
        // 0200:5efe (universal) and the IPv4 address.
        if (b[8] == 0x00 || b[8] == 0x02) && b[9] == 0x00 && b[10] == 0x5E && b[11] == 0xFE,
           let embedded = range(ofIPv4: Array(b[12..<16])) {
            return embedded
        }
        if b[0] & 0xFE == 0xFC { return "private" }                       // fc00::/7, RFC 4193
        if b[0] == 0xFE && b[1] & 0xC0 == 0x80 { return "link-local" }    // fe80::/10
        if b[0] == 0xFE && b[1] & 0xC0 == 0xC0 { return "private" }       // fec0::/10, site-local
        if b[0] == 0xFF { return "multicast" }                            // ff00::/8
        return nil
    }
}
#endif
