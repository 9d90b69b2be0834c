#if Server && os(Linux)
import Foundation
import ImagoServer
import Testing

/// The source guard's address ranges, IPv4 and IPv6, judged without any
/// connection (no test here sends a packet anywhere).
@Suite struct SourcePolicyTests {
    @Test(arguments: [
        ("0.0.0.0", "unspecified"), ("0.1.2.3", "unspecified"),
        ("127.0.0.1", "loopback"), ("127.255.255.254", "loopback"),
        ("10.0.0.1", "private"), ("172.16.0.1", "private"), ("172.31.255.255", "private"), ("192.168.1.1", "private"),
        ("100.64.0.1", "shared (CGNAT)"), ("100.127.255.255", "shared (CGNAT)"),
        ("169.254.169.254", "link-local"),
        ("224.0.0.1", "multicast"), ("239.255.255.250", "multicast"),
        ("255.255.255.255", "reserved"), ("240.0.0.1", "reserved"), ("192.0.0.8", "reserved"), ("198.18.0.1", "reserved"),
        ("::", "unspecified"), ("::1", "loopback"),
        ("fc00::1", "private"), ("fd12:3456:789a::1", "private"), ("fec0::1", "private"),
        ("fe80::1", "link-local"), ("febf::1", "link-local"),
        ("ff02::1", "multicast"),
        ("::ffff:127.0.0.1", "loopback"), ("::ffff:10.1.2.3", "private"), ("::ffff:169.254.169.254", "link-local"),
        ("::127.0.0.1", "loopback"), ("64:ff9b::10.0.0.1", "private"), ("2002:c0a8:0101::1", "private"),
        ("[::1]", "loopback"),
        // NAT64 local-use (RFC 8215), in RFC 6052's /48 layout and as a /96 inside it.
        ("64:ff9b:1:a00:0:100::", "private"), ("64:ff9b:1:7f00:0:100::", "loopback"),
        ("64:ff9b:1::10.0.0.1", "private"), ("64:ff9b:1::169.254.169.254", "link-local"),
        // Teredo: the client address (192.168.x, 127.0.0.1, 10.0.0.1) inverted in the last 32 bits.
        ("2001:0:4136:e378:8000:63bf:3f57:fefe", "private"), ("2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback"),
        ("2001:0:4136:e378:8000:63bf:f5ff:fffe", "private"),
        // ISATAP, both interface identifiers, under a global prefix.
        ("2001:db8::5efe:10.0.0.1", "private"), ("2001:db8::200:5efe:192.168.0.1", "private"),
        ("2a00:1450::5efe:127.0.0.1", "loopback"),
    ])
    func nonPublicAddressesAreNamed(_ literal: String, _ range: String) throws {
        let address = try #require(IPAddress(literal))
        #expect(address.nonPublicRange == range)
        let policy = SourcePolicy()
        let error = #expect(throws: ImageServerError.self) { try policy.check(address, resolvedFrom: "images.example") }
        #expect(error?.code == .forbiddenSource)
        #expect(error?.status == 404)   // imgproxy's "Invalid source URL"
        #expect(error?.message.contains(range) == true)
        #expect(throws: Never.self) { try SourcePolicy(allowsPrivateNetworks: true).check(address, resolvedFrom: "images.example") }
    }

    @Test(arguments: ["8.8.8.8", "1.1.1.1", "172.15.255.255", "172.32.0.1", "100.63.255.255", "100.128.0.1", "192.169.0.1",
                      "2001:4860:4860::8888", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:0808:0808::1",
                      "64:ff9b:1:808:8:800::", "64:ff9b:1::8.8.8.8", "2001:0:4136:e378:8000:63bf:f7f7:f7f7",
                      "2001:db8::5efe:8.8.8.8", "2001:db8::200:5efe:1.1.1.1"])
    func publicAddressesPass(_ literal: String) throws {
        let address = try #require(IPAddress(literal))
        #expect(address.nonPublicRange == nil)
        #expect(throws: Never.self) { try SourcePolicy().check(address, resolvedFrom: literal) }
    }

    @Test func onlyStrictLiteralsAreAddresses() {
        // Shorthand forms getaddrinfo would accept are host names to resolve, not literals.
        for text in ["127.1", "2130706433", "0x7f.0.0.1", "images.example", "", "1.2.3.4.5", "::ffff:1.2.3"] {
            #expect(IPAddress(text) == nil, "\(text)")
        }
        #expect(IPAddress("::ffff:127.0.0.1")?.description == "::ffff:127.0.0.1")
        #expect(IPAddress("192.0.2.7")?.description == "192.0.2.7")
    }

    @Test func urlsAreCheckedForSchemeHostAndLiteralAddresses() {
        let policy = SourcePolicy()
        for (url, words) in [
            ("file:///etc/passwd", "only http and https"),
            ("ftp://images.example/a.png", "only http and https"),
            ("gopher://images.example/", "only http and https"),
            ("http://127.0.0.1:8080/a.png", "loopback"),
            ("http://[::1]/a.png", "loopback"),
            ("http://[::ffff:192.168.0.1]/a.png", "private"),
            ("http://169.254.169.254/latest/meta-data", "link-local"),
            ("http://localhost/a.png", "loopback name"),
            ("http://images.localhost./a.png", "loopback name"),
        ] {
            let error = #expect(throws: ImageServerError.self, "\(url)") { try policy.check(URL(string: url)!) }
            #expect(error?.code == .forbiddenSource, "\(url)")
            #expect(error?.message.contains(words) == true, "\(url): \(error?.message ?? "")")
        }
        #expect(throws: Never.self) { try policy.check(URL(string: "https://images.example/a.png")!) }
        #expect(throws: Never.self) { try SourcePolicy(allowsPrivateNetworks: true).check(URL(string: "http://127.0.0.1:9/a.png")!) }
    }

    /// imgproxy's three switches, each alone: an allowed kind passes, every
    /// other non-public kind stays refused, literal or resolved; a
    /// `localhost` name is loopback.
    @Test func eachKindOfNonPublicAddressIsAllowedOnItsOwn() throws {
        let samples: [(SourcePolicy.NonPublicAddresses, [String])] = [
            (.loopback, ["127.0.0.1", "::1", "::ffff:127.0.0.1"]),
            (.privateNetworks, ["10.0.0.1", "192.168.1.1", "fd00::1"]),
            (.linkLocal, ["169.254.169.254", "fe80::1"]),
            (.other, ["100.64.0.1", "224.0.0.1", "0.0.0.0"]),
        ]
        for (allowed, _) in samples {
            var policy = SourcePolicy()
            policy.allowedAddresses = allowed
            for (kind, addresses) in samples {
                for text in addresses {
                    let address = try #require(IPAddress(text))
                    let refused = (try? policy.check(address, resolvedFrom: "images.example")) == nil
                    #expect(refused == (kind != allowed), "\(text) with \(allowed.rawValue)")
                    let literal = URL(string: address.isIPv4 ? "http://\(text)/a.png" : "http://[\(text)]/a.png")!
                    #expect(((try? policy.check(literal)) == nil) == (kind != allowed), "\(literal)")
                }
            }
            #expect(((try? policy.check(URL(string: "http://localhost/a.png")!)) == nil) == (allowed != .loopback))
        }
        var all = SourcePolicy()
        all.allowsPrivateNetworks = true
        #expect(all.allowedAddresses == .all)
    }

    @Test func allowedHostsLimitTheSources() {
        let policy = SourcePolicy(allowedHosts: ["images.example", "*.cdn.example"])
        for allowed in ["https://images.example/a.png", "https://IMAGES.example/a.png", "https://eu.cdn.example/a.png", "https://a.b.cdn.example/a.png"] {
            #expect(throws: Never.self, "\(allowed)") { try policy.check(URL(string: allowed)!) }
        }
        for refused in ["https://cdn.example/a.png", "https://evilcdn.example/a.png", "https://images.example.evil/a.png", "https://other.example/a.png"] {
            let error = #expect(throws: ImageServerError.self, "\(refused)") { try policy.check(URL(string: refused)!) }
            #expect(error?.message.contains("not among the allowed hosts") == true)
        }
    }
}
#endif
