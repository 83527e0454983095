import Foundation
import NearcardCrypto
import NearcardModel
import NearcardNode

#if canImport(Glibc)
    import Glibc
#endif

/// Lines from standard input, read on their own thread; a reader waits with a timeout without
/// disturbing the stream. The thread starts with the first question, not before: until then the
/// terminal belongs to whoever else reads it (the passphrase prompt that unlocks the keys at start,
/// which a reader already waiting on standard input would have robbed of its line).
final class LineQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var lines: [String] = []
    private var ended = false
    private var started = false

    /// Starts the reading thread once; called with `condition` held.
    private func startReading() {
        guard !started else { return }
        started = true
        let reader = Thread { [self] in
            while let line = readLine(strippingNewline: true) {
                condition.withLock {
                    lines.append(line)
                    condition.signal()
                }
            }
            condition.withLock {
                ended = true
                condition.broadcast()
            }
        }
        reader.start()
    }

    /// Drops lines typed while nobody was asking.
    func discardPending() {
        condition.withLock {
            startReading()
            lines.removeAll()
        }
    }

    /// One wait for a line, which can be called off.
    final class Wait: @unchecked Sendable {
        var cancelled = false
    }

    /// The next line, or nil at the timeout, at end of input, or when `wait` is cancelled.
    func next(timeout: TimeInterval, wait: Wait) -> String? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        startReading()
        while lines.isEmpty && !ended && !wait.cancelled {
            if !condition.wait(until: deadline) { break }
        }
        return lines.isEmpty || wait.cancelled ? nil : lines.removeFirst()
    }

    func cancel(_ wait: Wait) {
        condition.withLock {
            wait.cancelled = true
            condition.broadcast()
        }
    }
}
