public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A child process started with posix_spawn and reaped with waitpid (Foundation's `Process` on Linux
/// does not report a child's exit while processes it left in the background still run, and the
/// simulation starts daemons). The child gets an empty signal mask and default signal dispositions.
/// The one process type of `simulate`, the benchmarks and the tests: a long-running child (`init`),
/// or a command run to completion with its output captured (`capture`, `run`).
public final class ChildProcess: @unchecked Sendable {
    public let pid: pid_t
    public let argv: [String]
    /// Where its stderr (and, without pipes, its stdout) goes.
    public let log: String
    /// Write end of the child's stdin (nil when stdin is /dev/null).
    private var stdinFD: Int32?
    /// Read end of the child's stdout (nil when stdout goes to a file).
    public private(set) var stdoutFD: Int32?
    private let lock = NSLock()
    private var status: Int32?

    public struct SpawnError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Starts `argv[0]` (an absolute path) with `argv`. `pipes`: give it a stdin to write and a stdout
    /// to read; otherwise stdin is /dev/null and stdout joins `log`. stderr always goes to `log`.
    public init(_ argv: [String], environment: [String: String] = ProcessInfo.processInfo.environment, log: String, pipes: Bool) throws {
        self.argv = argv
        self.log = log
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var inPipe: [Int32] = [-1, -1]
        var outPipe: [Int32] = [-1, -1]
        if pipes {
            // Created close-on-exec atomically, so no other child started meanwhile inherits them.
            let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            guard socketpair(AF_UNIX, type, 0, &inPipe) == 0, socketpair(AF_UNIX, type, 0, &outPipe) == 0 else {
                throw SpawnError(description: "socketpair: \(String(cString: strerror(errno)))")
            }
            posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0)
            posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
            posix_spawn_file_actions_addopen(&actions, 2, log, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o600)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        var pid: pid_t = 0
        let rc = Self.spawn(&pid, argv, environment: environment, actions: &actions)
        if pipes {
            close(inPipe[0])
            close(outPipe[1])
        }
        guard rc == 0 else {
            if pipes {
                close(inPipe[1])
                close(outPipe[0])
            }
            throw SpawnError(description: "cannot run \(argv[0]): \(String(cString: strerror(rc)))")
        }
        self.pid = pid
        if pipes {
            stdinFD = inPipe[1]
            stdoutFD = outPipe[0]
        }
    }

    /// posix_spawn with an empty signal mask and default dispositions: the spawning process blocks some
    /// signals in its threads (a test runner, an event loop), and a child would inherit that and then
    /// ignore SIGTERM.
    static func spawn(_ pid: inout pid_t, _ argv: [String], environment: [String: String], actions: inout posix_spawn_file_actions_t) -> Int32 {
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attr, &empty)
        var all = sigset_t()
        sigemptyset(&all)
        for sig in 1..<32 where sig != SIGKILL && sig != SIGSTOP { sigaddset(&all, Int32(sig)) }
        posix_spawnattr_setsigdefault(&attr, &all)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        let cEnv: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0)=\($1)") } + [nil]
        defer {
            for p in cArgs { free(p) }
            for p in cEnv { free(p) }
        }
        // ETXTBSY: the program was written a moment ago and a process forked meanwhile (by another
        // thread) still holds it open for writing until it execs; that passes within milliseconds.
        var rc = posix_spawn(&pid, argv[0], &actions, &attr, cArgs, cEnv)
        for _ in 0..<20 where rc == ETXTBSY {
            usleep(25_000)
            rc = posix_spawn(&pid, argv[0], &actions, &attr, cArgs, cEnv)
        }
        return rc
    }

    /// What a command run to completion printed, and how it ended.
    public struct Captured: Sendable {
        /// The exit code; 128 + the signal when one ended it.
        public let code: Int32
        public let stdout: [UInt8]
        public let stderr: [UInt8]
    }

    /// Runs `argv` to completion, feeding it `stdin` and capturing stdout and stderr apart. A child still
    /// running after `timeout` seconds is killed (SIGKILL) and its stderr ends with a line saying so, so
    /// a hung command fails its caller instead of hanging it.
    public static func capture(
        _ argv: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
        stdin: [UInt8]? = nil, timeout: Double = 300
    ) throws -> Captured {
        // Socket pairs created close-on-exec atomically, so a child spawned concurrently by another
        // thread never inherits (and holds open) this child's streams.
        var outPipe: [Int32] = [0, 0]
        var errPipe: [Int32] = [0, 0]
        var inPipe: [Int32] = [0, 0]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &outPipe) == 0, socketpair(AF_UNIX, type, 0, &errPipe) == 0,
            socketpair(AF_UNIX, type, 0, &inPipe) == 0
        else {
            throw SpawnError(description: "socketpair: \(String(cString: strerror(errno)))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        var pid: pid_t = 0
        let rc = spawn(&pid, argv, environment: environment, actions: &actions)
        close(outPipe[1])
        close(errPipe[1])
        close(inPipe[0])
        guard rc == 0 else {
            close(outPipe[0])
            close(errPipe[0])
            close(inPipe[1])
            throw SpawnError(description: "cannot run \(argv[0]): \(String(cString: strerror(rc)))")
        }
        // Feed stdin from its own thread so a child that writes a lot before reading cannot deadlock us.
        let input = stdin ?? []
        let writeFD = inPipe[1]
        Thread {
            var offset = 0
            while offset < input.count {
                let n = input.withUnsafeBytes { write(writeFD, $0.baseAddress! + offset, $0.count - offset) }
                if n <= 0 { break }
                offset += n
            }
            close(writeFD)
        }.start()
        var out: [UInt8] = []
        var err: [UInt8] = []
        var fds = [pollfd(fd: outPipe[0], events: Int16(POLLIN), revents: 0), pollfd(fd: errPipe[0], events: Int16(POLLIN), revents: 0)]
        var open = 2
        var buf = [UInt8](repeating: 0, count: 65536)
        var deadline = Date().addingTimeInterval(timeout)
        var killed = false
        while open > 0 {
            let left = deadline.timeIntervalSinceNow
            if left <= 0 {
                if killed { break } // something the child started still holds its streams
                kill(pid, SIGKILL)
                killed = true
                deadline = Date().addingTimeInterval(5)
                err += Array("\n[\(argv.prefix(3).joined(separator: " ")) was still running after \(Int(timeout)) s and was killed]\n".utf8)
                continue
            }
            let ready = poll(&fds, nfds_t(fds.count), Int32(min(left, 3600) * 1000) + 1)
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            if ready == 0 { continue }
            for i in 0..<fds.count where fds[i].fd >= 0 && fds[i].revents != 0 {
                let n = read(fds[i].fd, &buf, buf.count)
                if n > 0 {
                    if i == 0 { out += buf[0..<n] } else { err += buf[0..<n] }
                } else if n == 0 || (errno != EINTR && errno != EAGAIN) {
                    close(fds[i].fd)
                    fds[i].fd = -1
                    open -= 1
                }
            }
        }
        for fd in fds where fd.fd >= 0 { close(fd.fd) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let code: Int32 = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return Captured(code: code, stdout: out, stderr: err)
    }

    /// Waits for it to exit, however long that takes; returns its exit code.
    @discardableResult
    public func wait() -> Int32 {
        stop(after: .infinity, signal: nil)
    }

    /// Writes a line to the child's stdin; false when it is gone.
    @discardableResult
    public func send(line: String) -> Bool {
        lock.withLock {
            guard let fd = stdinFD else { return false }
            var bytes = Array((line + "\n").utf8)
            var offset = 0
            while offset < bytes.count {
                let n = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
                if n < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += n
            }
            bytes.removeAll()
            return true
        }
    }

    /// Reads the child's stdout line by line on a thread of its own, until it closes.
    public func lines() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        readLines({ continuation.yield($0) }, atEnd: { continuation.finish() })
        return stream
    }

    /// Reads the child's stdout line by line on a thread of its own and hands each line to `body` on
    /// that thread as soon as it is read (no hop to another thread, for callers that time lines), then
    /// calls `atEnd` when it closes. A line longer than 4 MiB is cut there.
    public func readLines(_ body: @escaping @Sendable (String) -> Void, atEnd: @escaping @Sendable () -> Void = {}) {
        guard let fd = stdoutFD else {
            atEnd()
            return
        }
        let thread = Thread {
            var pending: [UInt8] = []
            var buf = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = read(fd, &buf, buf.count)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                for byte in buf[0..<n] {
                    if byte == 0x0A {
                        body(String(decoding: pending, as: UTF8.self))
                        pending.removeAll(keepingCapacity: true)
                    } else if pending.count < 4 << 20 {
                        pending.append(byte)
                    }
                }
            }
            close(fd)
            atEnd()
        }
        thread.start()
    }

    /// Whether it is still running (reaps it if it has exited).
    public var isRunning: Bool {
        lock.withLock {
            guard status == nil else { return false }
            var s: Int32 = 0
            if waitpid(pid, &s, WNOHANG) == pid {
                status = s
                return false
            }
            return true
        }
    }

    public func signal(_ sig: Int32) {
        if isRunning { kill(pid, sig) }
    }

    /// Waits up to `timeout` seconds for it to exit; then kills it. Returns its exit code.
    @discardableResult
    public func stop(after timeout: TimeInterval, signal first: Int32? = SIGTERM) -> Int32 {
        if let first { signal(first) }
        let deadline = Date().addingTimeInterval(timeout)
        while isRunning && Date() < deadline { usleep(10_000) }
        if isRunning {
            kill(pid, SIGKILL)
        }
        lock.withLock {
            if status == nil {
                var s: Int32 = 0
                while waitpid(pid, &s, 0) < 0 && errno == EINTR {}
                status = s
            }
            if let fd = stdinFD {
                close(fd)
                stdinFD = nil
            }
        }
        let s = lock.withLock { status! }
        return (s & 0x7F) == 0 ? (s >> 8) & 0xFF : 128 + (s & 0x7F)
    }

    /// Closes the child's stdin (it sees end of input).
    public func closeInput() {
        lock.withLock {
            if let fd = stdinFD {
                close(fd)
                stdinFD = nil
            }
        }
    }

    /// Runs a command to completion; returns its exit code and its output (stdout and stderr). One still
    /// running after `limit` seconds is killed (SIGKILL).
    public static func run(
        _ argv: [String], environment: [String: String] = ProcessInfo.processInfo.environment, limit: Double = 120
    ) throws -> (code: Int32, output: String) {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-run-\(UUID().uuidString).log").path
        defer { unlink(log) }
        let child = try ChildProcess(argv, environment: environment, log: log, pipes: false)
        let code = child.stop(after: limit, signal: nil)
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return (code, output)
    }

    deinit {
        if lock.withLock({ status == nil }) { _ = stop(after: 0, signal: SIGKILL) }
        if let fd = stdinFD { close(fd) }
    }
}
