#if Server
import Dispatch
import Foundation
import Imago
import Metrics
#if os(Linux) && canImport(CRsvg)
import ImagoSVGDrawing
#endif

/// Draws SVG documents in a child process, `imago-svg-rasterizer`, started
/// once per document, so that librsvg failing (a Rust panic, an abort, its
/// memory or time running out) costs that document, not the process that
/// asked. The image server draws every SVG source this way.
///
/// The child limits its own address space to ``memoryLimit`` and its CPU
/// time to ``timeout`` (rounded up) before it reads anything; this process
/// kills it (`SIGKILL`) at ``timeout`` of wall-clock time, or when the
/// calling task is cancelled, and always reaps it. Each failure is an
/// ``SVGRasterizingError/processFailed(_:)`` with its
/// ``SVGRasterizerFailure/Reason``, counted by
/// `imago_server_svg_rasterizer_failures` with a `reason` dimension.
///
/// The waiting is done on a thread of its own (the server: one of its
/// render slots' Dispatch threads), never on Swift's cooperative threads. The child is handed only the document's bytes, as
/// ``SVGRasterizer`` is: give it documents ``SVGSanitizer`` returned.
///
/// ```swift
/// let rasterizer = SVGRasterizerProcess(executable: SVGRasterizerProcess.defaultExecutable())
/// let image = try await rasterizer.image(from: try SVGSanitizer().sanitized(data))
/// ```
///
/// Linux only: elsewhere every call throws ``SVGRasterizingError/unavailable``.
package struct SVGRasterizerProcess: Sendable {
    /// The executable's file name.
    package static let executableName = "imago-svg-rasterizer"
    /// The environment variable that names the executable for ``locateExecutable(environment:)``.
    package static let environmentVariable = "IMAGO_SVG_RASTERIZER"

    /// The `imago-svg-rasterizer` executable.
    package var executable: URL
    /// The most seconds of wall-clock time one document may take, start to
    /// end; the child's CPU limit is this, rounded up. Default: 10.
    package var timeout: Double
    /// The child's address-space limit (`RLIMIT_AS`), in bytes. Default: 1 GiB.
    package var memoryLimit: Int
    /// The most pixels (width x height) a document may be drawn at.
    package var maximumPixelCount: Int
    /// Whether the child reads documents with libxml2's limits for huge
    /// documents off (librsvg's `RSVG_HANDLE_FLAG_UNLIMITED`; imgproxy's
    /// `IMGPROXY_SVG_UNLIMITED`): documents and attribute values over
    /// 10 MB, names over 50,000 bytes, nesting deeper than 256. The child's
    /// memory limit and timeout hold all the same. Default: `false`.
    package var liftsXMLLimits: Bool
    /// Called with each child's process ID once it is started: for tests
    /// that check it was reaped, and for tracing.
    package var onSpawn: (@Sendable (Int32) -> Void)?

    /// Creates a rasterizer that runs `executable`.
    package init(executable: URL, timeout: Double = 10, memoryLimit: Int = 1 << 30,
                maximumPixelCount: Int = ImageDecodingOptions.defaultMaximumPixelCount, liftsXMLLimits: Bool = false) {
        self.executable = executable
        self.timeout = timeout
        self.memoryLimit = memoryLimit
        self.maximumPixelCount = maximumPixelCount
        self.liftsXMLLimits = liftsXMLLimits
    }

    /// The executable to run when none is configured: the one
    /// ``environmentVariable`` names, else `imago-svg-rasterizer` beside
    /// the running executable (where `swift build` puts it beside `imago`).
    /// It may not exist: a run then fails with
    /// ``SVGRasterizerFailure/Reason/unavailable``.
    package static func defaultExecutable(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let named = environment[environmentVariable], !named.isEmpty { return URL(fileURLWithPath: named) }
        #if os(Linux)
        let running = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        #else
        let running = Bundle.main.executableURL?.resolvingSymlinksInPath() ?? URL(fileURLWithPath: CommandLine.arguments[0])
        #endif
        return running.deletingLastPathComponent().appendingPathComponent(executableName)
    }

    /// Whether ``executable`` is an executable file.
    package var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: executable.path) }

    /// The document drawn at its size, or, with a `thumbnail`, at the size
    /// the thumbnail's geometry scales it to and then cut as it says, as
    /// ``SVGRasterizer/image(from:thumbnail:)`` draws it. Cancelling the
    /// calling task kills the child.
    ///
    /// - Throws: ``SVGRasterizingError``: the rasterizer's own errors, as
    ///   the child reports them, or ``SVGRasterizingError/processFailed(_:)``.
    package func image(from svg: Data, thumbnail: Thumbnail? = nil) async throws(SVGRasterizingError) -> Image {
        let cancellation = SVGRasterizerCancellation()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Image, SVGRasterizingError>, Never>) in
                // A thread of its own: a wait of up to the timeout on Dispatch's
                // shared queues could hold back unrelated work queued behind it.
                let thread = Thread {
                    continuation.resume(returning: Result { () throws(SVGRasterizingError) in
                        try image(from: svg, thumbnail: thumbnail, cancellation: cancellation)
                    })
                }
                thread.name = "imago-svg-rasterizer wait"
                thread.start()
            }
        } onCancel: {
            cancellation.cancel()
        }
        return try result.get()
    }

    /// The image, drawn as ``image(from:thumbnail:)`` says, waiting on the
    /// calling thread (which must not be one of Swift's cooperative threads).
    package func image(from svg: Data, thumbnail: Thumbnail?, cancellation: SVGRasterizerCancellation?) throws(SVGRasterizingError) -> Image {
        var image: Image?
        try run(svg, cancellation: cancellation) { size, draw throws(SVGRasterizingError) in
            image = try SVGRasterizer.image(size: size, thumbnail: thumbnail, draw: draw)
        }
        guard let image else { throw .processFailed(SVGRasterizerFailure(.protocolError, "no image was drawn")) }
        return image
    }

    /// The document's size, as ``SVGRasterizer/size(of:)`` says, worked out
    /// by the child; waits on the calling thread.
    package func size(of svg: Data, cancellation: SVGRasterizerCancellation?) throws(SVGRasterizingError) -> (width: Int, height: Int) {
        var found = (width: 0, height: 0)
        try run(svg, cancellation: cancellation) { size, _ in found = size }
        return found
    }

    /// Runs the child for `svg`: hands `body` the document's size and a
    /// function that has the child draw it at a size (once at most); the
    /// child is told to stop if `body` does not draw. The failure is counted.
    private func run(
        _ svg: Data, cancellation: SVGRasterizerCancellation?,
        _ body: ((width: Int, height: Int), (_ target: (width: Int, height: Int)) throws(SVGRasterizingError) -> [UInt8]) throws(SVGRasterizingError) -> Void
    ) throws(SVGRasterizingError) {
        do {
            #if os(Linux) && canImport(CRsvg)
            try SVGRasterizerSession.run(self, svg: svg, cancellation: cancellation, body)
            #else
            throw SVGRasterizingError.unavailable
            #endif
        } catch {
            if case .processFailed(let failure) = error {
                Counter(label: "imago_server_svg_rasterizer_failures", dimensions: [("reason", failure.reason.rawValue)]).increment()
            }
            throw error
        }
    }
}

/// Kills a rasterizer's child when its caller is cancelled: before the
/// child starts (it is then killed as it starts), while it runs, or not at
/// all once it is reaped (its process ID may then be another's).
package final class SVGRasterizerCancellation: Sendable {
    private struct State {
        var cancelled = false
        var running: Int32?
    }

    private let state = Locked(State())

    /// A cancellation not cancelled yet.
    package init() {}

    /// Whether ``cancel()`` was called.
    package var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Kills the running child, and any child started after.
    package func cancel() {
        state.withLock { state in
            state.cancelled = true
            if let running = state.running { _ = kill(running, SIGKILL) }
        }
    }

    /// Records a started child; kills it at once when already cancelled.
    package func started(_ pid: Int32) {
        state.withLock { state in
            state.running = pid
            if state.cancelled { _ = kill(pid, SIGKILL) }
        }
    }

    /// Reaps the child by `reap`, under the lock, so that ``cancel()`` never
    /// signals a process ID the system may have given another process.
    package func reaping<T>(_ reap: () -> T) -> T {
        state.withLock { state in
            defer { state.running = nil }
            return reap()
        }
    }
}
#endif
