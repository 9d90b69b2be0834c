import ArgumentParser
import CommandLineSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The memory allocator `imago serve` runs with (`--malloc`,
/// `IMGPROXY_MALLOC`): the C library's own, or jemalloc or tcmalloc from
/// the system's packages, as imgproxy's Docker image offers.
///
/// Under a long mixed load glibc's malloc, left with its default of eight
/// arenas a core, keeps more memory than it uses and creeps; capped at two
/// arenas (what `MALLOC_ARENA_MAX=2` does, as imgproxy and libvips advise)
/// it holds a flat level, and so does jemalloc (`Benchmarks/soak-server-*.md`).
/// `serve` caps glibc's arenas at ``glibcArenas`` unless `MALLOC_ARENA_MAX`
/// says otherwise. An allocator must be in place before the process
/// allocates anything, so `serve` loads jemalloc or tcmalloc by starting
/// itself again, same process ID and arguments, with the library in
/// `LD_PRELOAD`. Linux only.
enum ServeAllocator: String, ExpressibleByArgument, CaseIterable, Sendable {
    /// The C library's malloc: nothing to load.
    case malloc
    /// jemalloc (Debian: `libjemalloc2`).
    case jemalloc
    /// tcmalloc's minimal build (Debian: `libtcmalloc-minimal4`).
    case tcmalloc

    /// The shared libraries that provide it, by file name, in order of preference.
    var libraryNames: [String] {
        switch self {
        case .malloc: []
        case .jemalloc: ["libjemalloc.so.2", "libjemalloc.so"]
        case .tcmalloc: ["libtcmalloc_minimal.so.4", "libtcmalloc_minimal.so"]
        }
    }

    /// The Debian package to install when the library is missing.
    var package: String {
        switch self {
        case .malloc: "libc6"
        case .jemalloc: "libjemalloc2"
        case .tcmalloc: "libtcmalloc-minimal4"
        }
    }

    /// Where distributions put shared libraries.
    static let libraryFolders = [
        "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu",
        "/usr/lib64", "/usr/lib", "/usr/local/lib",
    ]

    /// Set in the environment of the second start, so that a library the
    /// loader refused is an error rather than a loop.
    static let marker = "IMAGO_MALLOC_PRELOADED"

    /// The library's path on this machine, if it is installed.
    var library: String? {
        for name in libraryNames {
            for folder in Self.libraryFolders where FileManager.default.fileExists(atPath: folder + "/" + name) {
                return folder + "/" + name
            }
        }
        return nil
    }

    /// Whether the allocator's library is mapped into this process.
    var isLoaded: Bool {
        guard let stem = libraryNames.first?.split(separator: ".").first else { return false }
        return Self.mappedFiles().contains("/\(stem).so")
    }

    /// `/proc/self/maps`, read to its end through a handle (its size reads
    /// as 0, so a read of "the whole file" by size gets nothing); empty
    /// where there is none.
    static func mappedFiles() -> String {
        guard let maps = try? FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/maps")) else { return "" }
        defer { try? maps.close() }
        return String(decoding: (try? maps.readToEnd()) ?? Data(), as: UTF8.self)
    }

    /// The arenas glibc's malloc may create under `serve`, unless
    /// `MALLOC_ARENA_MAX` is set: two, where glibc's default is eight a
    /// core (a thread that finds its arena locked makes another, and each
    /// keeps its free pages in its own heaps).
    static let glibcArenas: Int32 = 2

    /// Caps glibc's arenas (`mallopt(M_ARENA_MAX)`) unless the environment
    /// sets `MALLOC_ARENA_MAX`, which glibc reads itself; nothing with
    /// another C library. Returns the cap it set, if it set one.
    @discardableResult
    static func capGlibcArenas(environment: [String: String] = ProcessInfo.processInfo.environment) -> Int32? {
        #if os(Linux)
        guard environment["MALLOC_ARENA_MAX"] == nil, let symbol = dlsym(nil, "mallopt") else { return nil }
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        let arenaMax: Int32 = -8   // M_ARENA_MAX in <malloc.h>
        return unsafeBitCast(symbol, to: Mallopt.self)(arenaMax, glibcArenas) == 1 ? glibcArenas : nil
        #else
        return nil
        #endif
    }

    /// The allocator as `--print-config` shows it: glibc's with its arena cap.
    func configurationValue(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        guard self == .malloc else { return rawValue }
        #if os(Linux)
        guard dlsym(nil, "mallopt") != nil else { return rawValue }
        return "malloc (arenas: \(environment["MALLOC_ARENA_MAX"].map { "MALLOC_ARENA_MAX=\($0)" } ?? "\(Self.glibcArenas)"))"
        #else
        return rawValue
        #endif
    }

    /// Why the allocator cannot be put in place.
    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    /// Returns once the process runs with this allocator: at once for
    /// `malloc` or when it is loaded already; otherwise the process starts
    /// again with the library preloaded, and this does not return.
    ///
    /// - Throws: ``Unavailable`` when the library is not installed, the
    ///   loader refused it, or the system is not Linux.
    func adopt() throws {
        if self == .malloc { Self.capGlibcArenas() }
        guard self != .malloc, !isLoaded else { return }
        #if os(Linux)
        let environment = ProcessInfo.processInfo.environment
        if environment[Self.marker] == rawValue {
            throw Unavailable(description: "\(rawValue) was preloaded (LD_PRELOAD=\(environment["LD_PRELOAD"] ?? "")), but the dynamic loader did not load it")
        }
        guard let library else {
            throw Unavailable(description: "\(rawValue) is not installed (none of \(libraryNames.joined(separator: ", ")) in \(Self.libraryFolders.joined(separator: ", "))); on Debian or Ubuntu: apt-get install \(package)")
        }
        var next = environment
        next["LD_PRELOAD"] = [library, environment["LD_PRELOAD"]].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ":")
        next[Self.marker] = rawValue
        let arguments = CommandLine.arguments.map { strdup($0) } + [nil]
        let variables = next.map { strdup("\($0.key)=\($0.value)") } + [nil]
        execve("/proc/self/exe", arguments, variables)
        let reason = String(cString: strerror(errno))
        (arguments + variables).forEach { free($0) }
        throw Unavailable(description: "cannot start again with \(library) preloaded: \(reason)")
        #else
        throw Unavailable(description: "--malloc \(rawValue) is for Linux (it preloads the library); on this system imago serve uses the system's allocator")
        #endif
    }
}
