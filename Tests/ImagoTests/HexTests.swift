import Foundation
@testable import Imago
import Testing

/// Digests become file names and ETags as lower-case hex, two digits a byte.
@Suite struct HexTests {
    @Test func everyByteValueIsTwoLowerCaseDigits() {
        let bytes = (0...255).map { UInt8($0) }
        #expect(bytes.lowercaseHex == bytes.map { String(format: "%02x", $0) }.joined())
        #expect([UInt8]().lowercaseHex.isEmpty)
    }
}
