internal import CLibC
import Foundation
package import NearcardCrypto

/// Fresh X25519 key pairs made ahead of need, so that no session waits for key generation (a scalar
/// multiplication each, about 50 µs): every exchange takes three — its Noise ephemeral and static keys
/// (docs/PROTOCOL.md §5, both per session) and the one-time key of its sealed route's box (§10) — and
/// a responder takes the first two as message 1 arrives, when the initiator is waiting for message 2.
///
/// One thread per process keeps a few in stock at the lowest scheduling priority (SCHED_IDLE): it runs
/// only when its CPU would otherwise idle — typically while this node waits for a peer's next message —
/// and gives way at once to anything else, so making keys never delays a session. A node too busy to
/// idle finds the stock empty and makes its keys inline, as it would without the stock: the work per
/// exchange is the same either way, only its moment moves. Each key is fresh randomness, handed out
/// once, and wiped when the session drops it (`SecureBytes`); the stock holds no more than `target`.
package enum SessionKeys {
    /// Keys kept in stock: two exchanges' worth.
    package static let target = 6

    private static let stock = KeyStock(target: target)

    /// A fresh key pair: one made ahead if the stock has one, else one made now.
    package static func take() -> X25519.PrivateKey { stock.take() }

    /// Starts filling the stock (a node calls this as it starts, so its first session finds keys ready).
    package static func prepare() { stock.start() }

    /// How many keys are in stock now (for tests).
    static var available: Int { stock.count }
}

/// The stock behind `SessionKeys`: a lock, the keys, and the idle-priority thread that refills them.
final class KeyStock: @unchecked Sendable {
    private let condition = NSCondition()
    private var keys: [X25519.PrivateKey] = []
    private var started = false
    /// The filler is blocked on the condition (a full stock): only then is it signalled, so a node whose
    /// filler is starved by work makes no wake-up calls for it.
    private var fillerWaiting = false
    private let target: Int

    init(target: Int) {
        self.target = target
    }

    var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return keys.count
    }

    func start() {
        condition.lock()
        defer { condition.unlock() }
        startLocked()
    }

    func take() -> X25519.PrivateKey {
        condition.lock()
        startLocked()
        let key = keys.popLast()
        if fillerWaiting {
            fillerWaiting = false
            condition.signal()
        }
        condition.unlock()
        return key ?? X25519.PrivateKey()
    }

    private func startLocked() {
        guard !started else { return }
        started = true
        Thread { [self] in fill() }.start()
    }

    private func fill() {
        // Named for `top -H` and /proc (at most 15 characters).
        _ = nearcard_name_thread("nearcard-keys")
        // If the system refuses the idle class (it never should), the thread still runs at normal
        // priority: correct, only no longer free of cost to the sessions it shares a CPU with.
        _ = nearcard_idle_priority()
        while true {
            condition.lock()
            while keys.count >= target {
                fillerWaiting = true
                condition.wait()
            }
            fillerWaiting = false
            condition.unlock()
            // Made outside the lock: a session taking a key never waits for one being made.
            let key = X25519.PrivateKey()
            condition.lock()
            if keys.count < target { keys.append(key) }
            condition.unlock()
        }
    }
}
