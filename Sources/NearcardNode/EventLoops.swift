package import Foundation
internal import NIOConcurrencyHelpers
internal import NIOCore
internal import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif

/// The event loops the node's sessions run on.
public enum EventLoops {
    /// SwiftNIO sizes its shared event-loop group by the machine's cores and cgroup limits, not by the
    /// CPUs this process may run on: under `taskset` or systemd's `CPUAffinity=` a node would run more
    /// event loops than it has CPUs, and every hand-over between two loops (each accepted connection
    /// moves to the next loop) would wait for a context switch. So, unless NIO_SINGLETON_GROUP_LOOP_COUNT
    /// is set already, the group gets as many loops as the affinity mask allows when that is fewer.
    /// Runs before anything touches the group.
    public static func sizeToAllowedCPUs() {
        guard getenv("NIO_SINGLETON_GROUP_LOOP_COUNT") == nil,
            let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") })
        else { return }
        // "Cpus_allowed:\tff,ffffffff": the affinity mask in hex, in comma-separated 32-bit groups.
        let allowed = line.dropFirst("Cpus_allowed:".count).reduce(0) { n, c in n + (c.hexDigitValue?.nonzeroBitCount ?? 0) }
        guard allowed >= 1, allowed < System.coreCount else { return }
        setenv("NIO_SINGLETON_GROUP_LOOP_COUNT", String(allowed), 0)
    }
}

extension EventLoops {
    /// Runs a no-op on every loop of the node's group and waits for them all: true when each answered
    /// within `timeout` (a stuck loop means stuck sessions; a watchdog should not be fed then).
    package static func ping(timeout: TimeInterval = 5) async -> Bool {
        let loops = Array(MultiThreadedEventLoopGroup.singleton.makeIterator())
        let waiting = NIOLockedValueBox<CheckedContinuation<Bool, Never>?>(nil)
        @Sendable func decide(_ ok: Bool) {
            waiting.withLockedValue { c in
                c?.resume(returning: ok)
                c = nil
            }
        }
        return await withCheckedContinuation { continuation in
            waiting.withLockedValue { $0 = continuation }
            // Whichever comes first decides; the other finds nothing left to resume.
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { decide(false) }
            EventLoopFuture.andAllSucceed(loops.map { $0.submit {} }, on: loops[0]).whenComplete { _ in decide(true) }
        }
    }
}

/// Runs `body`, which blocks (a D-Bus round trip to avahi-daemon may wait its 25 s timeout), on a
/// thread of its own, never one of the cooperative pool's or Dispatch's shared ones, which others
/// are waiting for.
package func onOwnThread<T: Sendable>(_ name: String, _ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { (c: CheckedContinuation<T, Never>) in
        let thread = Thread { c.resume(returning: body()) }
        thread.name = name
        thread.start()
    }
}
