import Foundation
import NearcardCrypto
import Testing

@testable import NearcardNode

#if canImport(Glibc)
    import Glibc
#endif

/// Session keys made ahead: every key handed out is a fresh, valid X25519 key pair, handed out once;
/// the stock refills by itself, on a thread that only runs when its CPU would otherwise idle.
@Suite struct SessionKeysTests {
    @Test func keysAreFreshValidAndHandedOutOnce() throws {
        SessionKeys.prepare()
        // More than the stock holds: the ones made ahead, then ones made on the spot.
        let keys = (0..<(3 * SessionKeys.target)).map { _ in SessionKeys.take() }
        #expect(Set(keys.map(\.publicKey)).count == keys.count)
        for key in keys {
            // The public key is the secret's: remade from the secret bytes alone.
            #expect(try X25519.PrivateKey(secret: key.secret).publicKey == key.publicKey)
        }
        // Two keys agree on a shared secret, as a handshake needs.
        #expect(try keys[0].sharedSecret(with: keys[1].publicKey).constantTimeEquals(keys[1].sharedSecret(with: keys[0].publicKey)))
    }

    @Test func theStockRefillsOnAnIdlePriorityThread() async throws {
        // A stock of its own: the process-wide one is shared with the sessions other suites run at the
        // same time, which take keys as fast as it refills them.
        let stock = KeyStock(target: SessionKeys.target)
        stock.start()
        try await Self.waitUntil { stock.count == SessionKeys.target }
        #expect(stock.count == SessionKeys.target)
        for _ in 0..<SessionKeys.target { _ = stock.take() }
        // Even on a busy machine the idle class gets a sliver of CPU; a full stock is 6 scalar multiplications.
        try await Self.waitUntil { stock.count == SessionKeys.target }
        #expect(stock.count == SessionKeys.target)
        let filler = try #require(Self.thread(named: "nearcard-keys"), "no thread named nearcard-keys")
        #expect(sched_getscheduler(filler) == 5, "the filler runs in SCHED_IDLE (5), not policy \(sched_getscheduler(filler))")
    }

    /// Polls `condition` every 5 ms for up to 30 s.
    static func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = Date().addingTimeInterval(30)
        while !condition() && Date() < deadline { try await Task.sleep(nanoseconds: 5_000_000) }
    }

    /// The id of this process's thread called `name` (its `comm`).
    static func thread(named name: String) -> pid_t? {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return nil }
        for task in tasks {
            guard let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8) else { continue }
            if comm.trimmingCharacters(in: .whitespacesAndNewlines) == name { return pid_t(task) }
        }
        return nil
    }
}
