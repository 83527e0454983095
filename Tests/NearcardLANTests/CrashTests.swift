import Foundation
import NearcardCrypto
import NearcardProcess
import NearcardSimulation
import NearcardStore
import NearcardTestSupport
import Synchronization
import Testing

/// A node killed with SIGKILL at random moments while people exchange with it and send it messages:
/// its database stays sound, each exchange is recorded whole or not at all, and with the senders'
/// outbox retries every message arrives exactly once.
@Suite(.serialized) struct CrashTests {
    /// The node under test, restarted on the same port after each kill.
    final class Victim: @unchecked Sendable {
        let lab: Lab
        let home: URL
        let port: Int
        private let lock = NSLock()
        private var process: ChildProcess
        private var killCount = 0
        var kills: Int { lock.withLock { killCount } }

        init(lab: Lab, home: URL) throws {
            self.lab = lab
            self.home = home
            let (p, port) = try lab.listen(home: home, ["--accept", "all"], log: Victim.log())
            process = p
            self.port = port
        }

        static func log() -> URL { FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-victim-\(UUID().uuidString).log") }

        /// SIGKILL, then a new process on the same port (published again on the LAN).
        func crashAndRestart() throws {
            try lock.withLock {
                process.kill(SIGKILL)
                _ = process.wait()
                killCount += 1
                process = try lab.listen(home: home, ["--accept", "all", "--port", "\(port)"], log: Victim.log()).0
            }
        }

        func crash() {
            lock.withLock {
                process.kill(SIGKILL)
                _ = process.wait()
                killCount += 1
            }
        }

        func restart() throws {
            try lock.withLock { process = try lab.listen(home: home, ["--accept", "all", "--port", "\(port)"], log: Victim.log()).0 }
        }
    }

    /// Kills the victim at random moments (0.3–1.2 s apart) until stopped.
    final class Killer: @unchecked Sendable {
        private let stopped = NSLock()
        private var stop = false
        private let done = DispatchSemaphore(value: 0)

        init(_ victim: Victim) {
            Thread.detachNewThread {
                while !self.isStopped {
                    usleep(UInt32.random(in: 300_000...1_200_000))
                    if self.isStopped { break }
                    try? victim.crashAndRestart()
                }
                self.done.signal()
            }
        }

        var isStopped: Bool { stopped.withLock { stop } }
        func finish() {
            stopped.withLock { stop = true }
            done.wait()
        }
    }

    /// What the node's database says after a crash: sound, and every contact whole.
    func checkWhole(_ home: URL, _ what: String) throws {
        let db = try NearcardDatabase(home: NearcardHome(path: home.path))
        #expect(try db.integrityCheck() == "ok", "\(what): integrity check")
    }

    @Test func killNineDuringExchangesAndMessagesLosesNothing() throws {
        let lab = try Lab("kn")
        let node = try TestPerson(name: "Victim Node", card: ["--company", "Crash Test"])
        let clients = try (0..<8).map { try TestPerson(name: "Client \($0)") }
        defer {
            node.cli.cleanUp()
            for c in clients { c.cli.cleanUp() }
        }
        let victim = try Victim(lab: lab, home: node.home)

        // 1. At least 200 exchanges, four at a time, while the node is killed and restarted — and on
        //    until it has been killed five times (how many exchanges fit between kills depends on the
        //    machine), at most 600.
        let killer = Killer(victim)
        let tally = Tally()
        let issued = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            while true {
                let i: Int = issued.withLock { n in
                    n += 1
                    return n - 1
                }
                if i >= 600 || (i >= 200 && victim.kills >= 5) { break }
                tally.add(try? lab.nearcard(["exchange", "127.0.0.1:\(victim.port)", "--yes", "--json"], home: clients[i % clients.count].home))
            }
        }
        killer.finish()
        let (codes, _) = tally.results
        let succeeded = codes.filter { $0 == 0 }.count
        #expect(
            victim.kills >= 5 && succeeded >= 20 && succeeded < codes.count,
            "kills \(victim.kills), exchanges completed \(succeeded) of \(codes.count)")

        // One more kill, and look at the database as the crash left it.
        victim.crash()
        try checkWhole(node.home, "after the exchanges")
        let book = try node.contacts()
        // At least 20 exchanges completed: their clients are in the book (one contact each, whatever the kills).
        #expect(!book.isEmpty && book.count <= clients.count, "\(book.count) contacts after \(succeeded) completed exchanges with \(clients.count) clients")
        for c in book {
            #expect(
                c["verificationStatus"] == "verified" && c["exchangeSignature"]?.stringValue != nil && c["myExchangeSignature"]?.stringValue != nil
                    && c["sealedRoute"]?.stringValue != nil && c["graphExportEdgeId"]?.stringValue != nil, "a contact recorded in part: \(c)")
        }
        let graph = try node.cli.run(["contacts", "export", "--graph"])
        #expect(graph.code == 0, "\(graph.stderr)")
        let edges = graph.json["edges"]?.arrayValue ?? []
        #expect(edges.count == book.count, "one graph edge per contact: \(edges.count) edges, \(book.count) contacts")
        for c in clients {
            try checkWhole(c.home, "a client")
            let theirs = try c.contacts()
            #expect(theirs.count <= 1 && theirs.allSatisfy { $0["didPublicKey"]?.stringValue == node.did && $0["verificationStatus"] == "verified" })
        }

        // 2. Every client holds the node as a contact (finish the exchanges the crashes interrupted).
        try victim.restart()
        for c in clients where try c.contacts().isEmpty {
            #expect(try lab.nearcard(["exchange", "127.0.0.1:\(victim.port)", "--yes"], home: c.home).code == 0)
        }

        // 3. 200 messages, 25 from each client, while the node is killed and restarted; each is
        //    delivered at once or queued.
        let killer2 = Killer(victim)
        let sent = Tally()
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for i in stride(from: worker, to: 200, by: 4) {
                sent.add(try? lab.nearcard(["message", node.did, "crash-test message \(i)", "--wait", "1"], home: clients[i % clients.count].home))
            }
        }
        killer2.finish()
        #expect(sent.results.0.allSatisfy { $0 == 0 }, "every message is delivered or queued: \(sent.results.1.prefix(3))")
        victim.crash()
        try checkWhole(node.home, "after the messages")

        // 4. The node comes back; the senders' outboxes deliver what is left.
        try victim.restart()
        for _ in 0..<6 {
            var queued = 0
            for c in clients {
                _ = try lab.nearcard(["outbox", "--send", "--wait", "2"], home: c.home)
                queued += (try lab.nearcard(["outbox", "--json"], home: c.home).list()).count
            }
            if queued == 0 { break }
        }
        let inbox = try lab.nearcard(["inbox", "--json"], home: node.home).list()
        let texts = inbox.compactMap { $0["text"]?.stringValue }
        #expect(texts.count == 200, "messages in the inbox: \(texts.count) (lost or doubled)")
        #expect(Set(texts) == Set((0..<200).map { "crash-test message \($0)" }), "every message exactly once")
    }
}
