// imago-svg-rasterizer: draws one sanitised SVG document with librsvg, in a
// process of its own, so that a panic, an abort, memory or time running out
// costs one request and not the image server. The server starts it once
// per document (`SVGRasterizerProcess` in ImagoServer) and speaks
// `SVGRasterizerWire` over its standard input and output.
//
//     imago-svg-rasterizer --memory BYTES --cpu SECONDS [--parent PID] [--xml-limits standard|lifted]
//
// Before it reads anything it limits its own address space (RLIMIT_AS) and
// CPU time (RLIMIT_CPU: SIGXCPU at SECONDS, SIGKILL a second later), turns
// off core files, and asks to be killed when the server goes (Linux). File
// writes are left alone: fontconfig may write its cache. It links no Foundation, so it starts in milliseconds.
// `--xml-limits lifted` reads the document with libxml2's limits for huge
// documents off (librsvg's RSVG_HANDLE_FLAG_UNLIMITED); the memory and CPU
// limits hold all the same.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CImagoSystem
import ImagoSVGDrawing

/// Writes `message` to standard error and exits with status 2.
func usage(_ message: String) -> Never {
    let text = "imago-svg-rasterizer: \(message)\n"
        + "usage: imago-svg-rasterizer --memory BYTES --cpu SECONDS [--parent PID] [--xml-limits standard|lifted]\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
    exit(2)
}

/// The limits, the parent's process ID and whether libxml2's limits are lifted, from the arguments.
func arguments() -> (memory: UInt64, cpu: UInt64, parent: pid_t?, liftsXMLLimits: Bool) {
    var memory: UInt64?, cpu: UInt64?, parent: pid_t?, liftsXMLLimits = false
    var rest = CommandLine.arguments.dropFirst()
    while let flag = rest.popFirst() {
        guard let value = rest.popFirst() else { usage("\(flag) needs a value") }
        switch flag {
        case "--memory": memory = UInt64(value)
        case "--cpu": cpu = UInt64(value)
        case "--parent": parent = pid_t(value)
        case "--xml-limits":
            guard value == "standard" || value == "lifted" else { usage("--xml-limits is standard or lifted") }
            liftsXMLLimits = value == "lifted"
        default: usage("unknown argument \(flag)")
        }
    }
    guard let memory, memory > 0, let cpu, cpu > 0 else { usage("--memory and --cpu must be positive integers") }
    return (memory, cpu, parent, liftsXMLLimits)
}

#if canImport(Glibc)
/// A resource `setrlimit` limits.
typealias Resource = __rlimit_resource_t
let (addressSpace, cpuTime, coreFiles) = (Resource(RLIMIT_AS.rawValue), Resource(RLIMIT_CPU.rawValue), Resource(RLIMIT_CORE.rawValue))
#else
/// A resource `setrlimit` limits.
typealias Resource = Int32
let (addressSpace, cpuTime, coreFiles) = (RLIMIT_AS, RLIMIT_CPU, RLIMIT_CORE)
#endif

/// Sets one resource limit, soft and hard, or exits.
func limit(_ resource: Resource, soft: UInt64, hard: UInt64) {
    var value = rlimit(rlim_cur: rlim_t(soft), rlim_max: rlim_t(hard))
    if setrlimit(resource, &value) != 0 { usage("setrlimit(\(resource)) failed: errno \(errno)") }
}

/// Reads exactly `count` bytes from standard input, or exits (the server went away).
func readExactly(_ count: Int) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    var done = 0
    while done < count {
        let got = bytes.withUnsafeMutableBytes { read(0, $0.baseAddress! + done, count - done) }
        if got > 0 {
            done += got
        } else if got < 0 && errno == EINTR {
            continue
        } else {
            exit(3)
        }
    }
    return bytes
}

/// Writes all of `bytes` to standard output, or exits (the server went away).
func writeAll(_ bytes: [UInt8]) {
    var done = 0
    while done < bytes.count {
        let written = bytes.withUnsafeBytes { write(1, $0.baseAddress! + done, bytes.count - done) }
        if written > 0 {
            done += written
        } else if written < 0 && errno == EINTR {
            continue
        } else {
            exit(3)
        }
    }
}

/// Draws the request on standard input, with libxml2's limits lifted when
/// `liftsXMLLimits`; any failure is a reply.
func serve(liftsXMLLimits: Bool) throws(SVGDrawingFailure) {
    guard let header = SVGRasterizerWire.parseRequestHeader(readExactly(SVGRasterizerWire.requestHeaderLength)) else {
        throw .badRequest("not a request")
    }
    let document = readExactly(header.documentLength)
    #if canImport(CRsvg)
    let drawing = try document.withUnsafeBytes { buffer in
        Result { () throws(SVGDrawingFailure) in try SVGDrawingDocument(buffer, liftsXMLLimits: liftsXMLLimits) }
    }.get()
    let size = try drawing.size(maximumPixelCount: header.maximumPixelCount)
    writeAll(SVGRasterizerWire.sizeReply(width: size.width, height: size.height))
    guard let target = SVGRasterizerWire.size(readExactly(8)), target.width > 0, target.height > 0 else { return }
    guard target.width <= SVGDrawingDocument.maximumSide, target.height <= SVGDrawingDocument.maximumSide,
          target.width * target.height <= header.maximumPixelCount else {
        throw .tooLarge(width: target.width, height: target.height, limit: header.maximumPixelCount)
    }
    let pixels = try drawing.draw(size: size, into: target)
    writeAll([SVGRasterizerWire.pixelsTag])
    writeAll(pixels)
    #else
    _ = (document, liftsXMLLimits)
    throw .badRequest("this build has no librsvg")
    #endif
}

/// Whether a sanitizer's runtime is linked in (a `--sanitize` build): it
/// reserves terabytes of address space for its shadow memory, so the
/// address-space limit would stop it; the CPU limit and the parent's
/// deadline still hold.
func runsUnderASanitizer() -> Bool {
    #if canImport(Glibc)
    let everywhere = UnsafeMutableRawPointer(bitPattern: 0)  // RTLD_DEFAULT
    #else
    let everywhere = UnsafeMutableRawPointer(bitPattern: -2)  // RTLD_DEFAULT
    #endif
    return ["__tsan_init", "__asan_init"].contains { name in name.withCString { dlsym(everywhere, $0) } != nil }
}

let limits = arguments()
if !runsUnderASanitizer() { limit(addressSpace, soft: limits.memory, hard: limits.memory) }
limit(cpuTime, soft: limits.cpu, hard: limits.cpu + 1)
limit(coreFiles, soft: 0, hard: 0)
if let parent = limits.parent {
    _ = imago_kill_when_parent_dies()
    // The server may have gone before the request above was made.
    if getppid() != parent { exit(4) }
}
do {
    try serve(liftsXMLLimits: limits.liftsXMLLimits)
} catch {
    writeAll(SVGRasterizerWire.failureReply(error))
}
exit(0)
