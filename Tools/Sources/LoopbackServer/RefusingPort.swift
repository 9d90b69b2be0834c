#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A loopback port that refuses every connection for as long as the value
/// lives: a socket bound to it but never listening. Stopping a server to
/// get a closed port races with parallel tests, whose servers may be given
/// the same port a moment later; this one stays reserved.
public final class RefusingPort: @unchecked Sendable {
    // @unchecked Sendable: the descriptor is set once and only closed in deinit.
    private let descriptor: Int32
    /// The reserved port.
    public let port: Int

    /// Binds a fresh socket to an ephemeral port on 127.0.0.1.
    public init() throws {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            throw POSIXError(.EADDRINUSE)
        }
        self.descriptor = descriptor
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }

    /// `http://127.0.0.1:PORT/PATH`.
    public func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }
}
