import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs a program with posix_spawn and waits for exactly that pid (waitpid). Foundation's `Process`
/// on Linux does not report a child's exit while processes the child left in the background (the
/// daemons scripts/lab.sh starts) are still running, so the tests use this instead.
public enum Subprocess {
    /// Spawn attributes that give the child an empty signal mask and default dispositions: the test
    /// process blocks some signals in its threads, and a child would inherit that (and then ignore SIGTERM).
    static func withCleanSignals<T>(_ body: (inout posix_spawnattr_t) throws -> T) rethrows -> T {
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
        return try body(&attr)
    }

    public struct Output: Sendable {
        public let code: Int32
        public let stdout: [UInt8]
        public let stderr: [UInt8]
    }

    /// A child still running after `timeout` seconds is killed (SIGKILL) and its stderr ends with a line
    /// saying so: a hung command fails its test instead of hanging the whole suite.
    public static func run(_ path: String, _ args: [String], environment: [String: String], stdin: [UInt8]? = nil,
                           timeout: Double = 300) throws -> Output {
        // Socket pairs created close-on-exec atomically, so a child spawned concurrently by another
        // test never inherits (and holds open) this child's streams.
        var outPipe: [Int32] = [0, 0], errPipe: [Int32] = [0, 0], inPipe: [Int32] = [0, 0]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &outPipe) == 0, socketpair(AF_UNIX, type, 0, &errPipe) == 0,
              socketpair(AF_UNIX, type, 0, &inPipe) == 0 else {
            throw LabError("socketpair: \(String(cString: strerror(errno)))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + args).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0)=\($1)") } + [nil]
        defer {
            for p in argv { free(p) }
            for p in envp { free(p) }
        }
        var pid: pid_t = 0
        let rc = withCleanSignals { posix_spawn(&pid, path, &actions, &$0, argv, envp) }
        close(outPipe[1])
        close(errPipe[1])
        close(inPipe[0])
        guard rc == 0 else {
            close(outPipe[0]); close(errPipe[0]); close(inPipe[1])
            throw LabError("cannot run \(path): \(String(cString: strerror(rc)))")
        }
        // Feed stdin from its own thread so a child that writes a lot before reading cannot deadlock us.
        let input = stdin ?? []
        let writeFD = inPipe[1]
        let writer = Thread {
            var offset = 0
            while offset < input.count {
                let n = input.withUnsafeBytes { write(writeFD, $0.baseAddress! + offset, $0.count - offset) }
                if n <= 0 { break }
                offset += n
            }
            close(writeFD)
        }
        writer.start()
        var out: [UInt8] = [], err: [UInt8] = []
        var fds = [pollfd(fd: outPipe[0], events: Int16(POLLIN), revents: 0), pollfd(fd: errPipe[0], events: Int16(POLLIN), revents: 0)]
        var open = 2
        var buf = [UInt8](repeating: 0, count: 65536)
        var deadline = Date().addingTimeInterval(timeout)
        var killed = false
        while open > 0 {
            let left = deadline.timeIntervalSinceNow
            if left <= 0 {
                if killed { break }  // something the child started still holds its streams
                kill(pid, SIGKILL)
                killed = true
                deadline = Date().addingTimeInterval(5)
                err += Array("\n[test harness: \(path) \(args.prefix(2).joined(separator: " ")) was still running after \(Int(timeout)) s and was killed]\n".utf8)
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
        return Output(code: code, stdout: out, stderr: err)
    }
}

/// A long-running child started with posix_spawn, output to a file; reaped with waitpid.
public final class Spawned: @unchecked Sendable {
    public let pid: pid_t
    /// Where its stdout and stderr go.
    public let log: URL
    private var status: Int32?

    public init(_ path: String, _ args: [String], log: URL) throws {
        self.log = log
        SecretWatch.shared.learn(arguments: args, environment: [:])
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log.path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + args).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = ProcessInfo.processInfo.environment.map { strdup("\($0)=\($1)") } + [nil]
        defer {
            for p in argv { free(p) }
            for p in envp { free(p) }
        }
        var pid: pid_t = 0
        let rc = Subprocess.withCleanSignals { posix_spawn(&pid, path, &actions, &$0, argv, envp) }
        guard rc == 0 else { throw LabError("cannot run \(path): \(String(cString: strerror(rc)))") }
        self.pid = pid
    }

    /// Whether it is still running (reaps it if it has exited).
    public var isRunning: Bool {
        guard status == nil else { return false }
        var s: Int32 = 0
        if waitpid(pid, &s, WNOHANG) == pid { status = s; return false }
        return true
    }

    public func kill(_ signal: Int32 = SIGTERM) {
        if isRunning { Glibc.kill(pid, signal) }
    }

    /// Waits for it to exit; returns its exit code (128+signal when killed).
    @discardableResult
    public func wait() -> Int32 {
        if status == nil {
            var s: Int32 = 0
            while waitpid(pid, &s, 0) < 0 && errno == EINTR {}
            status = s
        }
        let s = status!
        return (s & 0x7F) == 0 ? (s >> 8) & 0xFF : 128 + (s & 0x7F)
    }

    deinit { kill(SIGKILL); _ = wait() }
}
