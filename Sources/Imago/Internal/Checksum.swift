import Foundation

/// A fast 64-bit checksum for detecting damaged cache files (not for security).
enum Checksum {
    static func of(_ data: Data) -> UInt64 {
        data.withUnsafeBytes { raw in
            var hash: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(raw.count)
            let words = raw.count / 8
            for index in 0..<words {
                let word = raw.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self)
                hash = (hash ^ word) &* 0xFF51_AFD7_ED55_8CCD
                hash ^= hash >> 29
            }
            for index in (words * 8)..<raw.count {
                hash = (hash ^ UInt64(raw[index])) &* 0xC4CE_B9FE_1A85_EC53
            }
            return hash ^ (hash >> 32)
        }
    }
}
