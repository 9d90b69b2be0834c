#if Server && os(Linux)
import Foundation
import ImagoServer
import Testing

/// imgproxy's signature scheme, checked against vectors computed outside
/// Swift (Python's hmac and openssl; see docs/plans/image-server.md).
@Suite struct SigningTests {
    let key = try! SigningKey(hexKey: "736563726574", hexSalt: "68656C6C6F")
    let documented = "/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png"

    @Test func theDocumentedExampleSignsAsImgproxySignsIt() {
        #expect(key.signature(forPath: documented) == "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8")
        #expect(key.isValid(signature: "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8", forPath: documented))
    }

    @Test func aSecondKeyAndSaltPairAgreesWithPython() throws {
        let other = try SigningKey(
            hexKey: "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881",
            hexSalt: "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"
        )
        let path = "/fill/300/300/no/1/aHR0cDovL2ltZy5leGFtcGxlLmNvbS9wcmV0dHkvaW1hZ2UuanBn.png"
        #expect(other.signature(forPath: path) == "_PQ4ytCQMMp-1w1m_vP6g8Qb-Q7yF9mwghf6PddqxLw")
    }

    @Test func anythingButTheExactSignatureIsRejected() {
        let good = key.signature(forPath: documented)
        var flipped = Array(good)
        flipped[5] = flipped[5] == "A" ? "B" : "A"
        #expect(!key.isValid(signature: String(flipped), forPath: documented))
        #expect(!key.isValid(signature: good, forPath: documented + "x"))
        #expect(!key.isValid(signature: String(good.dropLast(2)), forPath: documented), "a truncated signature")
        #expect(!key.isValid(signature: "insecure", forPath: documented))
        #expect(!key.isValid(signature: "", forPath: documented))
        #expect(!key.isValid(signature: "not base64!", forPath: documented))
        #expect(!key.isValid(signature: good + "==", forPath: documented + "/"))
    }

    /// Every other spelling of a valid signature decodes to the same bytes
    /// in a lenient decoder; each would be a separate cache key downstream.
    @Test func aSignatureHasExactlyOneSpelling() {
        let good = key.signature(forPath: documented)
        #expect(good.utf8.count == 43)
        let middle = good.index(good.startIndex, offsetBy: 20)
        // The last character carries 4 bits of the digest and 2 zero bits:
        // the next 3 characters of the alphabet decode to the same digest.
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let last = alphabet.firstIndex(of: good.last!)!
        let strayBits = (1...3).map { String(good.dropLast()) + String(alphabet[last + $0]) }
        let spellings = [
            good + "=", good + "==", "=" + good, String(good[..<middle]) + "=" + String(good[middle...]),
            good.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/"),
            good + "A", " " + good, good + "\n",
        ] + strayBits
        for spelling in spellings where spelling != good {
            #expect(!key.isValid(signature: spelling, forPath: documented), "\(spelling) was accepted")
        }
        #expect(key.isValid(signature: good, forPath: documented))
    }

    /// imgproxy's `IMGPROXY_SIGNATURE_SIZE`: the digest's first N bytes.
    @Test func aShortSignatureIsTheDigestsFirstBytes() throws {
        func bytes(_ text: String) -> Data? {
            let standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            return Data(base64Encoded: standard + String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4))
        }
        let whole = try #require(bytes(key.signature(forPath: documented)))
        for size in [1, 8, 16, 31] {
            let short = key.signature(forPath: documented, size: size)
            #expect(bytes(short) == whole.prefix(size))
            #expect(key.isValid(signature: short, forPath: documented, size: size))
            #expect(!key.isValid(signature: short, forPath: documented), "a short signature where the whole digest is expected")
            #expect(!key.isValid(signature: key.signature(forPath: documented), forPath: documented, size: size), "the whole digest where \(size) bytes are expected")
        }
    }

    @Test func keysMustBeHexadecimal() throws {
        for (key, salt, wrong) in [("xyz0", "00", "key"), ("", "00", "key"), ("00", "abc", "salt"), ("00", "0g", "salt")] {
            let error = #expect(throws: SigningKey.InvalidHex.self) { try SigningKey(hexKey: key, hexSalt: salt) }
            #expect(error?.name == wrong)
        }
        let parsed = try SigningKey(hexKey: "0aFf", hexSalt: "")
        #expect(parsed.key == [0x0A, 0xFF])
        #expect(parsed.salt == [])
    }

    @Test func aBuiltPathVerifiesAndParsesBack() throws {
        var options = ProcessingOptions()
        options.resizingType = .fill
        options.width = 300
        options.height = 200
        options.gravity = .compass(.north)
        options.quality = 80
        options.format = .webp
        let source = URL(string: "https://images.example/albums/cover%201.jpg?size=large")!
        for encoding in [ImageServerPath.SourceEncoding.plain, .base64] {
            let path = ImageServerPath(source: source, options: options).path(signedWith: key, encoding: encoding)
            let parsed = try ImageServerPath(parsing: path)
            #expect(key.isValid(signature: parsed.signature, forPath: parsed.signedPart))
            #expect(parsed.options == options)
            #expect(parsed.source == source)
        }
    }
}
#endif
