#if Server && os(Linux) && canImport(CRsvg)
import CImagoSystem
import Foundation
import Glibc
import Imago
import ImagoSVGDrawing

/// One run of `imago-svg-rasterizer`: spawned with its standard input and
/// output on one end of a socket pair and its standard error on another,
/// spoken to with ``SVGRasterizerWire``, then killed if still running and
/// reaped. Every wait is a `poll` that watches both sockets (so neither a
/// full standard error nor a child that writes before it reads can stall
/// it) and ends at the deadline.
struct SVGRasterizerSession: ~Copyable {
    /// Why the exchange stopped before its end.
    private enum Stop: Error {
        /// The child closed its end (it exited, or was killed).
        case closed
        /// The wall-clock deadline passed; the child was killed.
        case deadline
    }

    /// How much of the child's standard error is kept, to tell a panic from other failures.
    static let keptErrorLength = 4096

    private let pid: pid_t
    /// This process's end of the child's standard input and output (non-blocking).
    private let socket: Int32
    /// This process's end of the child's standard error (non-blocking); -1 once it is closed.
    private var errors: Int32
    private let deadline: UInt64
    private let cancellation: SVGRasterizerCancellation?
    /// The start of the child's standard error.
    private var errorText: [UInt8] = []
    /// Whether this process killed the child at the deadline.
    private var killedAtDeadline = false

    /// Runs the child for `svg`, as ``SVGRasterizerProcess`` describes.
    static func run(
        _ process: SVGRasterizerProcess, svg: Data, cancellation: SVGRasterizerCancellation?,
        _ body: ((width: Int, height: Int), (_ target: (width: Int, height: Int)) throws(SVGRasterizingError) -> [UInt8]) throws(SVGRasterizingError) -> Void
    ) throws(SVGRasterizingError) {
        var session = try SVGRasterizerSession(process, cancellation: cancellation)
        do {
            try session.exchange(process, svg: svg, body)
        } catch {
            _ = session.finish()
            throw error
        }
        // Everything was received; a child that then failed to exit cleanly is still a failure.
        let status = session.finish()
        guard status == 0 else { throw .processFailed(session.failure(status: status)) }
    }

    /// Starts the child, with its limits on its command line.
    private init(_ process: SVGRasterizerProcess, cancellation: SVGRasterizerCancellation?) throws(SVGRasterizingError) {
        let path = process.executable.path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw .processFailed(SVGRasterizerFailure(.unavailable, "no executable at \(path)"))
        }
        var io: [Int32] = [-1, -1], stderrPair: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &io) == 0 else {
            throw .processFailed(SVGRasterizerFailure(.unavailable, "socketpair failed: errno \(errno)"))
        }
        guard socketpair(AF_UNIX, type, 0, &stderrPair) == 0 else {
            let failure = errno
            close(io[0])
            close(io[1])
            throw .processFailed(SVGRasterizerFailure(.unavailable, "socketpair failed: errno \(failure)"))
        }
        let cpuSeconds = max(1, Int(process.timeout.rounded(.up)))
        let arguments = [path, "--memory", "\(max(1, process.memoryLimit))", "--cpu", "\(cpuSeconds)", "--parent", "\(getpid())",
                         "--xml-limits", process.liftsXMLLimits ? "lifted" : "standard"]
        let spawned = Self.spawn(path, arguments: arguments, io: io[1], errors: stderrPair[1])
        close(io[1])
        close(stderrPair[1])
        guard case .success(let pid) = spawned else {
            close(io[0])
            close(stderrPair[0])
            if case .failure(let code) = spawned {
                throw .processFailed(SVGRasterizerFailure(.unavailable, "\(path) could not be started: errno \(code)"))
            }
            throw .processFailed(SVGRasterizerFailure(.unavailable, "\(path) could not be started"))
        }
        for descriptor in [io[0], stderrPair[0]] { _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK) }
        self.pid = pid
        socket = io[0]
        errors = stderrPair[0]
        // The rasterizer's own timeout, or the render's deadline (WorkDeadline) when that comes first.
        let own = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, process.timeout) * 1e9)
        deadline = min(own, WorkDeadline.current?.uptimeNanoseconds ?? .max)
        self.cancellation = cancellation
        cancellation?.started(pid)
        process.onSpawn?(pid)
    }

    /// `posix_spawn` with `io` as standard input and output, `errors` as
    /// standard error, every other descriptor closed, no signal blocked or
    /// ignored; the child's process ID or the error number.
    private static func spawn(_ path: String, arguments: [String], io: Int32, errors: Int32) -> Result<pid_t, SpawnError> {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, io, 0)
        posix_spawn_file_actions_adddup2(&actions, io, 1)
        posix_spawn_file_actions_adddup2(&actions, errors, 2)
        _ = imago_spawn_close_from(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t(), allSignals = sigset_t()
        sigemptyset(&noSignals)
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var argv = arguments.map { strdup($0) }
        argv.append(nil)
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        // ETXTBSY says the executable is open for writing somewhere: being
        // installed, or its descriptor inherited by a fork that has not yet
        // reached exec. Both pass within milliseconds, so try a few times.
        var result = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        for attempt in 1...5 where result == ETXTBSY {
            usleep(useconds_t(attempt * 10_000))
            result = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        }
        return result == 0 ? .success(pid) : .failure(SpawnError(code: result))
    }

    /// An error number from `posix_spawn`.
    private struct SpawnError: Error, CustomStringConvertible {
        let code: Int32
        var description: String { "\(code)" }
    }

    // MARK: The exchange

    /// Sends the request, reads the size, lets `body` have the child draw, and reads to the child's end.
    private mutating func exchange(
        _ process: SVGRasterizerProcess, svg: Data,
        _ body: ((width: Int, height: Int), (_ target: (width: Int, height: Int)) throws(SVGRasterizingError) -> [UInt8]) throws(SVGRasterizingError) -> Void
    ) throws(SVGRasterizingError) {
        let limit = process.maximumPixelCount
        do {
            let request = SVGRasterizerWire.requestHeader(maximumPixelCount: limit, documentLength: svg.count) + [UInt8](svg)
            let size = try reply(sending: request, expecting: SVGRasterizerWire.sizeTag, length: 8).flatMap(SVGRasterizerWire.size)
            guard let size else { throw SVGRasterizingError.processFailed(protocolFailure("a size that does not read")) }
            var drew = false
            var failure: SVGRasterizingError?
            try body(size) { (target: (width: Int, height: Int)) throws(SVGRasterizingError) -> [UInt8] in
                guard !drew else { throw .processFailed(SVGRasterizerFailure(.protocolError, "the document is drawn once")) }
                drew = true
                do {
                    let length = target.width.multipliedReportingOverflow(by: target.height * 4)
                    guard !length.overflow, target.width * target.height <= limit else {
                        throw SVGRasterizingError.tooLarge(width: target.width, height: target.height, limit: limit)
                    }
                    let sent = SVGRasterizerWire.target(width: target.width, height: target.height)
                    guard let pixels = try reply(sending: sent, expecting: SVGRasterizerWire.pixelsTag, length: length.partialValue) else {
                        throw SVGRasterizingError.processFailed(protocolFailure("no pixels"))
                    }
                    return pixels
                } catch {
                    let mapped = mapped(error)
                    failure = mapped
                    throw mapped
                }
            }
            if let failure { throw failure }
            if !drew { _ = try transfer(send: SVGRasterizerWire.target(width: 0, height: 0), receive: 0) }
            try awaitEnd()
        } catch {
            throw mapped(error)
        }
    }

    /// Sends `request` and reads the reply: the `length` bytes after the
    /// `expected` tag, or the child's failure thrown as its error.
    private mutating func reply(sending request: [UInt8], expecting expected: UInt8, length: Int) throws -> [UInt8]? {
        let tag = try transfer(send: request, receive: 1)
        if tag.first == expected { return try transfer(send: [], receive: length) }
        guard tag.first == SVGRasterizerWire.failureTag else { throw SVGRasterizingError.processFailed(protocolFailure("an unknown reply")) }
        let header = try transfer(send: [], receive: SVGRasterizerWire.failureHeaderLength)
        guard let messageLength = SVGRasterizerWire.messageLength(ofFailureHeader: header),
              let failure = SVGRasterizerWire.failure(header: header, message: try transfer(send: [], receive: messageLength)) else {
            throw SVGRasterizingError.processFailed(protocolFailure("a failure that does not read"))
        }
        throw SVGRasterizingError(failure)
    }

    /// Reads until the child closes its end, within the deadline.
    private mutating func awaitEnd() throws {
        do {
            _ = try transfer(send: [], receive: 1)
            throw SVGRasterizingError.processFailed(protocolFailure("more than the protocol allows"))
        } catch Stop.closed {
            return
        }
    }

    /// The error a failed exchange is reported as: a stop becomes the
    /// failure the child's end explains (killed, panicked, out of memory...).
    private mutating func mapped(_ error: any Error) -> SVGRasterizingError {
        if let error = error as? SVGRasterizingError { return error }
        return .processFailed(failure(status: finish()))
    }

    /// A protocol failure, with what the child said on its standard error.
    private func protocolFailure(_ detail: String) -> SVGRasterizerFailure {
        SVGRasterizerFailure(.protocolError, detail + stderrSuffix)
    }

    /// Sends all of `bytes` and receives exactly `count`, watching the
    /// child's standard error too, until the deadline.
    private mutating func transfer(send bytes: [UInt8], receive count: Int) throws -> [UInt8] {
        var received = [UInt8](repeating: 0, count: count)
        var sent = 0, got = 0
        while sent < bytes.count || got < count {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else {
                killedAtDeadline = true
                _ = kill(pid, SIGKILL)
                throw Stop.deadline
            }
            let wait = Int32(min(1000, (deadline - now) / 1_000_000 + 1))
            var events: Int16 = 0
            if sent < bytes.count { events |= Int16(POLLOUT) }
            if got < count { events |= Int16(POLLIN) }
            var watched = [pollfd(fd: socket, events: events, revents: 0), pollfd(fd: errors, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&watched, errors >= 0 ? 2 : 1, wait)
            if ready < 0 && errno != EINTR { throw Stop.closed }
            guard ready > 0 else { continue }
            if watched[1].revents != 0 { drainErrors() }
            let revents = watched[0].revents
            if revents & Int16(POLLOUT) != 0, sent < bytes.count {
                let written = bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
                if written > 0 {
                    sent += written
                } else if written < 0 && errno != EAGAIN && errno != EINTR {
                    throw Stop.closed
                }
            }
            if revents & Int16(POLLIN | POLLHUP | POLLERR) != 0, got < count {
                let read = received.withUnsafeMutableBytes { recv(socket, $0.baseAddress! + got, count - got, 0) }
                if read > 0 {
                    got += read
                } else if read == 0 || (errno != EAGAIN && errno != EINTR) {
                    throw Stop.closed
                }
            } else if revents & Int16(POLLHUP | POLLERR) != 0 {
                throw Stop.closed
            }
        }
        return received
    }

    /// Reads what the child wrote to its standard error: the first
    /// ``keptErrorLength`` bytes are kept, the rest dropped.
    private mutating func drainErrors() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while errors >= 0 {
            let read = buffer.withUnsafeMutableBytes { Glibc.read(errors, $0.baseAddress!, $0.count) }
            if read > 0 {
                errorText += buffer.prefix(min(read, Self.keptErrorLength - min(Self.keptErrorLength, errorText.count)))
            } else if read < 0 && (errno == EAGAIN || errno == EINTR) {
                return
            } else {
                close(errors)
                errors = -1
            }
        }
    }

    // MARK: The end

    /// Waits for the child to end by itself until the deadline (reading
    /// its standard error), kills it then, reaps it and closes the sockets;
    /// its wait status (the same on every call after the first).
    private mutating func finish() -> Int32 {
        if let status = reapedStatus { return status }
        while imago_child_has_ended(pid) == 0 {
            let now = DispatchTime.now().uptimeNanoseconds
            if now >= deadline, !killedAtDeadline {
                killedAtDeadline = true
                _ = kill(pid, SIGKILL)
            }
            if errors >= 0 {
                // Its standard error ends when it exits (or closes it).
                var watched = [pollfd(fd: errors, events: Int16(POLLIN), revents: 0)]
                if poll(&watched, 1, Int32(now < deadline ? min(20, (deadline - now) / 1_000_000 + 1) : 1)) > 0 { drainErrors() }
            } else {
                // Closed: the exit is a moment away.
                usleep(200)
            }
        }
        let pid = self.pid
        // Reaped under the cancellation's lock, so it never kills a reused process ID.
        let reap = { () -> Int32 in
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            return status
        }
        let status = cancellation?.reaping(reap) ?? reap()
        drainErrors()
        close(socket)
        if errors >= 0 { close(errors) }
        errors = -1
        reapedStatus = status
        return status
    }

    /// The wait status once the child is reaped.
    private var reapedStatus: Int32?

    /// What a child's end says, from its wait status and its standard error.
    private func failure(status: Int32) -> SVGRasterizerFailure {
        let text = String(decoding: errorText, as: UTF8.self)
        let signaled = status & 0x7F != 0 && status & 0x7F != 0x7F
        let signal = status & 0x7F
        let how = signaled ? "signal \(signal)" : "exit status \((status >> 8) & 0xFF)"
        if killedAtDeadline { return SVGRasterizerFailure(.timeout, "killed after its deadline" + stderrSuffix) }
        if cancellation?.isCancelled == true { return SVGRasterizerFailure(.cancelled, "killed when its caller was cancelled") }
        if text.contains("panicked at") { return SVGRasterizerFailure(.panic, how + stderrSuffix) }
        if text.contains("memory allocation of") || text.localizedCaseInsensitiveContains("out of memory")
            || text.contains("failed to allocate") {
            return SVGRasterizerFailure(.outOfMemory, how + stderrSuffix)
        }
        if signaled && (signal == SIGXCPU || signal == SIGKILL) { return SVGRasterizerFailure(.cpuLimit, how + stderrSuffix) }
        if !signaled && status == 0 { return protocolFailure("the child ended before its reply") }
        return SVGRasterizerFailure(.crash, how + stderrSuffix)
    }

    /// `: ` and the start of the child's standard error, one line, or nothing.
    private var stderrSuffix: String {
        let text = String(decoding: errorText.prefix(300), as: UTF8.self)
            .split(whereSeparator: \.isNewline).joined(separator: " | ").trimmingCharacters(in: .whitespaces)
        return text.isEmpty ? "" : ": " + text
    }

    deinit {
        // finish() is called on every path; this only guards a path that forgot.
        if reapedStatus == nil {
            _ = kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            close(socket)
            if errors >= 0 { close(errors) }
        }
    }
}
#endif
