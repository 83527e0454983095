import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A per-step timeline of sessions, for finding where an exchange's time goes (docs/PERFORMANCE.md):
/// with `NEARCARD_SESSION_TRACE=FILE` in the environment, each frame read and written, each flush,
/// store and event is stamped with the monotonic clock and the thread's CPU time, kept in memory,
/// and appended to FILE as the process exits (one line per step: pid, thread, wall ns, thread CPU
/// ns, what). Off by default, when it costs one branch per step. Nothing secret is recorded: step
/// names and sizes only.
enum SessionTrace {
    static let file: String? = ProcessInfo.processInfo.environment["NEARCARD_SESSION_TRACE"]
    static var enabled: Bool { file != nil }
    private static let lines = Mutex<[String]>([])
    private static let registered = Mutex(false)

    @inline(__always)
    static func mark(_ what: @autoclosure () -> String) {
        guard file != nil else { return }
        record(what())
    }

    private static func record(_ what: String) {
        var wall = timespec()
        var cpu = timespec()
        clock_gettime(CLOCK_MONOTONIC, &wall)
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu)
        let ns = { (t: timespec) in Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_nsec) }
        let line = "\(getpid()) \(UInt(pthread_self()) % 1_000_000) \(ns(wall)) \(ns(cpu)) \(what)"
        let first = registered.withLock { r in
            defer { r = true }
            return !r
        }
        if first { atexit { SessionTrace.write() } }
        lines.withLock { $0.append(line) }
    }

    private static func write() {
        guard let file else { return }
        let text = lines.withLock { $0.joined(separator: "\n") } + "\n"
        let fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        _ = text.utf8CString.withUnsafeBufferPointer { Glibc.write(fd, $0.baseAddress, $0.count - 1) }
        close(fd)
    }
}
