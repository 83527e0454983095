import Foundation
import NearcardCrypto
import NearcardDiscovery
import NearcardModel
import NearcardNode

#if canImport(Glibc)
    import Glibc
#endif

/// The process-wide signal pipe behind `NodeSetup.interrupts()`.
final class Interrupts: @unchecked Sendable {
    static let shared = Interrupts()
    nonisolated(unsafe) static var writeFD: Int32 = -1
    private let lock = NSLock()
    private var continuations: [AsyncStream<Int32>.Continuation] = []

    private init() {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFL, O_NONBLOCK)
        Interrupts.writeFD = fds[1]
        let readFD = fds[0]
        let thread = Thread { [self] in
            var byte: UInt8 = 0
            while true {
                let n = read(readFD, &byte, 1)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                let sig = Int32(byte)
                for c in lock.withLock({ continuations }) { c.yield(sig) }
            }
        }
        thread.start()
        for sig in [SIGINT, SIGTERM] {
            // Only async-signal-safe work in the handler: one write(2).
            signal(sig) { number in
                var b = UInt8(truncatingIfNeeded: number)
                _ = write(Interrupts.writeFD, &b, 1)
            }
        }
    }

    func add(_ c: AsyncStream<Int32>.Continuation) {
        lock.withLock { continuations.append(c) }
    }
}
