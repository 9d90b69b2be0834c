import CImagoSystem
import Foundation
import ChildProcesses
import Testing

/// `imago_open_beneath`, the open that local image sources go through:
/// no path, link or race may lead it out of its root.
@Suite struct OpenBeneathTests {
    /// `root/dir/secret` (inside), `outside/secret` (beside the root),
    /// and links of each kind inside the root.
    final class Tree {
        let base: URL
        let root: URL
        let rootDescriptor: Int32

        init() throws {
            base = FileManager.default.temporaryDirectory.appendingPathComponent("imago-beneath-\(UUID().uuidString)")
            root = base.appendingPathComponent("root")
            let manager = FileManager.default
            try manager.createDirectory(at: root.appendingPathComponent("dir"), withIntermediateDirectories: true)
            try manager.createDirectory(at: base.appendingPathComponent("outside"), withIntermediateDirectories: true)
            try Data("inside".utf8).write(to: root.appendingPathComponent("dir/secret"))
            try Data("OUTSIDE".utf8).write(to: base.appendingPathComponent("outside/secret"))
            try manager.createSymbolicLink(atPath: root.appendingPathComponent("up").path, withDestinationPath: "../outside")
            try manager.createSymbolicLink(atPath: root.appendingPathComponent("absolute").path, withDestinationPath: base.appendingPathComponent("outside").path)
            try manager.createSymbolicLink(atPath: root.appendingPathComponent("absoluteInside").path, withDestinationPath: root.appendingPathComponent("dir").path)
            try manager.createSymbolicLink(atPath: root.appendingPathComponent("relativeInside").path, withDestinationPath: "dir")
            try manager.createSymbolicLink(atPath: root.appendingPathComponent("proc").path, withDestinationPath: "/proc/self/root")
            rootDescriptor = open(base.appendingPathComponent("root").path, O_RDONLY | O_DIRECTORY)
        }

        deinit {
            close(rootDescriptor)
            try? FileManager.default.removeItem(at: base)
        }

        /// What `open` finds at `path`, or the errno.
        func read(_ path: String, walk: Bool = false) -> Result<String, POSIXError> {
            let descriptor = walk ? imago_open_beneath_walk(rootDescriptor, path, O_RDONLY) : imago_open_beneath(rootDescriptor, path, O_RDONLY)
            guard descriptor >= 0 else { return .failure(POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)) }
            defer { close(descriptor) }
            var buffer = [UInt8](repeating: 0, count: 16)
            let count = Foundation.read(descriptor, &buffer, buffer.count)
            return .success(String(decoding: buffer.prefix(max(0, count)), as: UTF8.self))
        }
    }

    @Test(arguments: [false, true])
    func pathsAndLinksThatLeaveTheRootAreRefused(walk: Bool) throws {
        let tree = try Tree()
        #expect(tree.read("dir/secret", walk: walk) == .success("inside"))
        for path in ["up/secret", "absolute/secret", "absoluteInside/secret", "proc/etc/passwd", "../outside/secret",
                     "dir/../../outside/secret", "/etc/passwd", "", "dir//secret", "./dir/secret", "dir/."] {
            let result = tree.read(path, walk: walk)
            guard case .failure = result else {
                Issue.record("\(path) was opened: \(result)")
                continue
            }
        }
        #expect(tree.read("dir/missing", walk: walk) == .failure(POSIXError(.ENOENT)))
        // A relative link that stays beneath the root: followed by openat2, not by the walk.
        let throughLink = tree.read("relativeInside/secret", walk: walk)
        if walk {
            #expect((try? throughLink.get()) == nil, "the walk follows no link")
        } else {
            #expect(throughLink == .success("inside"))
        }
    }

    #if os(Linux)
    @Test func theKernelsResolutionIsUsedWhereItExists() throws {
        let tree = try Tree()
        _ = tree.read("dir/secret")
        #expect(imago_open_beneath_used_openat2() == 1, "this kernel has openat2 (Linux 5.6 and later)")
    }

    /// A loop swaps `dir` with a link that leads out, as fast as it can,
    /// while the file beneath `dir` is opened 100,000 times: each open sees
    /// the inside file or a refusal, never the outside one.
    @Test(arguments: [false, true])
    func aComponentSwappedForALinkMidOpenNeverLeadsOut(walk: Bool) throws {
        let tree = try Tree()
        let swapper = try NameSwapper(tree.root.appendingPathComponent("dir"), tree.root.appendingPathComponent("up"))
        defer { swapper.stop() }
        var inside = 0, refused = 0
        for _ in 0..<100_000 {
            switch tree.read("dir/secret", walk: walk) {
            case .success("inside"): inside += 1
            case .success(let other): Issue.record("read \(other) through a swapped link"); return
            case .failure: refused += 1
            }
        }
        #expect(swapper.isRunning, "the swap loop ran throughout")
        #expect(inside > 0 && refused > 0, "the race was real: \(inside) inside, \(refused) refused")
    }
    #endif
}
