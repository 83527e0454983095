import Foundation
import NearcardCrypto
import NearcardProcess
import NearcardSimulation
import NearcardTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 49: a bot's book that stalls never splits an exchange. A bot on PostgreSQL (and a fleet of two
/// on one database) exchanges with visitors — some alone, some with a node running on their home —
/// while the database is frozen (SIGSTOP) or stopped for D seconds, starting at each step of the
/// exchange (a relay holds the session at a frame boundary while the fault begins). Afterwards, once the
/// visitors' unconfirmed exchanges are settled (PROTOCOL §11), each pair of books holds the same
/// exchange (the same graph edge) or neither does, and every visitor told "exchanged" is held by the bot
/// with that edge.
///
/// `make test` runs outages of 5 and 40 s, twice per step and kind of visitor; with
/// `NEARCARD_OUTAGE_MATRIX=full` (CI) 5, 15, 40 and 120 s, ten times each.
@Suite struct StoreOutageTests {
    static let full = ProcessInfo.processInfo.environment["NEARCARD_OUTAGE_MATRIX"] == "full"
    static let durations: [Double] = full ? [5, 15, 40, 120] : [5, 40]
    static let runs = full ? 10 : 2
    /// Where the relay holds the session: after this many frames. A bot exchange is 13 frames,
    /// `><>><><>><<><` (`>` towards the bot): Noise's three, hello, nonce and reveal, the decisions, the
    /// cards, the bot's `done`, the visitor's `done`, the bot's `confirm`.
    static let phases: [(name: String, after: Int)] = [
        ("before consent", 3), ("between the cards", 9), ("at the commit", 11), ("during the confirm", 12),
    ]

    enum Mode: String, CaseIterable, Sendable { case frozen, stopped }
    enum Visitor: String, CaseIterable, Sendable {
        /// `exchange` run alone.
        case alone
        /// `exchange` beside a node running on the visitor's home (the node's exchange).
        case besideNode = "beside a node"
        /// `exchange` alone, with one of a fleet of two bots on one database.
        case fleet
    }

    func log(_ name: String) -> URL { FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-outage-\(UUID().uuidString)-\(name).log") }

    struct Bot {
        let person: TestPerson
        let port: Int
        let database: String
    }

    struct Run {
        let phase: String
        let visitor: Visitor
        let person: TestPerson
        let bot: Bot
        let relayLog: URL
        var node: ChildProcess?
        var exchange: ChildProcess?
        var exit: Int32 = -1
    }

    /// The matrix runs on a thread of its own: it waits (outages of up to 120 s, a hundred processes),
    /// and a test that blocked the cooperative pool's threads that long would starve every async test
    /// of the process meanwhile (a consent task not run for 60 s).
    @Test(.timeLimit(.minutes(30)), arguments: Mode.allCases) func aStallingBookNeverSplitsAnExchange(_ mode: Mode) async throws {
        let (count, failures) = try await withCheckedThrowingContinuation { (done: CheckedContinuation<(Int, [String]), any Error>) in
            Thread { done.resume(with: Result { try self.matrix(mode) }) }.start()
        }
        #expect(failures.isEmpty, "\(failures.count) split or unsettled of \(count):\n\(failures.joined(separator: "\n"))")
    }

    /// Runs the matrix for one kind of outage: how many runs, and a line for each that ended split or unsettled.
    func matrix(_ mode: Mode) throws -> (Int, [String]) {
        let lab = try Lab("so")
        let pg = try TestPostgres()
        defer {
            if mode == .frozen { pg.thaw() }
            pg.stop()
        }
        let relay = CLI.packageRoot.appendingPathComponent("Tests/Interop/fault_relay.py").path
        let databases = try [pg.freshDatabase(), pg.freshDatabase()]
        // postgres://nearcard@/NAME?host=…: the database's name.
        let names = databases.map { String($0.components(separatedBy: "@/")[1].split(separator: "?")[0]) }
        let policyHome = try TestPerson(name: "Policy")
        defer { policyHome.cli.cleanUp() }
        let policy = policyHome.home.appendingPathComponent("policy.json")
        try #"{"version": 1, "accept": "everyone", "maxConcurrentSessions": 512}"#.write(to: policy, atomically: true, encoding: .utf8)
        TestAccount.give(policy.path)

        // One bot on the first database; a fleet of two on the second.
        var bots: [Bot] = []
        for (n, db) in [0, 1, 1].enumerated() {
            let person = try TestPerson(name: "Booth \(n + 1)")
            let url = log("bot\(n + 1)")
            _ = try lab.spawn(
                [CLI.executable.path, "bot", "--policy", policy.path, "--home", person.home.path, "--store", databases[db], "--no-discovery", "--port", "0"],
                log: url)
            bots.append(Bot(person: person, port: try Lab.startedPort(in: url), database: names[db]))
        }
        defer { for b in bots { b.person.cli.cleanUp() } }

        var failures: [String] = []
        var count = 0
        for duration in Self.durations {
            let resume = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-outage-resume-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: resume) }
            var wave: [Run] = []
            for phase in Self.phases {
                for visitor in Visitor.allCases {
                    for _ in 0..<Self.runs {
                        count += 1
                        let person = try TestPerson(name: "Visitor \(count)")
                        let bot = visitor == .fleet ? bots[1 + count % 2] : bots[0]
                        let relayLog = log("relay\(count)")
                        // Its own source address: the bot's per-address limits see visitors, not one relay.
                        _ = try lab.spawn(
                            [
                                CLI.python, relay, "\(20000 + count)", "127.0.0.1", "\(bot.port)", "--once", "--pause-after", "\(phase.after)",
                                "--resume-file", resume, "--source", "127.9.\(count / 200).\(count % 200 + 1)",
                            ], log: relayLog)
                        var run = Run(phase: phase.name, visitor: visitor, person: person, bot: bot, relayLog: relayLog)
                        if visitor == .besideNode {
                            run.node = try lab.listen(home: person.home, ["--accept", "all", "--no-discovery"], log: log("node\(count)")).0
                        }
                        wave.append(run)
                    }
                }
            }
            defer {
                for r in wave {
                    _ = r.node?.stop(after: 5)
                    r.person.cli.cleanUp()
                }
            }
            func relayed(_ r: Run, _ what: String) -> Bool { ((try? String(contentsOf: r.relayLog, encoding: .utf8)) ?? "").contains(what) }
            try waitUntil("the relays to listen", seconds: 30) { wave.allSatisfy { relayed($0, "listening") } }
            let first = count - wave.count + 1
            for i in wave.indices {
                wave[i].exchange = try lab.spawn(
                    [CLI.executable.path, "exchange", "127.0.0.1:\(20000 + first + i)", "--yes", "--json", "--home", wave[i].person.home.path],
                    log: log("visitor\(first + i)"))
            }
            // Every session held at its step (or over before it: a refusal is no split either).
            try? waitUntil("every session to reach its step", seconds: 30) { wave.allSatisfy { relayed($0, "paused") || relayed($0, "\"frames\"") } }
            switch mode {
            case .frozen: pg.freeze()
            case .stopped: try pg.halt()
            }
            _ = FileManager.default.createFile(atPath: resume, contents: nil)
            usleep(useconds_t(duration * 1_000_000))
            switch mode {
            case .frozen: pg.thaw()
            case .stopped: try pg.resume()
            }
            for i in wave.indices { wave[i].exit = wave[i].exchange?.wait() ?? -1 }

            // Settling: `outbox --send` asks now (beside a node, the node asks; on its own it would wait
            // out its back-off after the failed tries during the outage).
            func edgeAtVisitor(_ r: Run) throws -> (edge: String?, unconfirmed: Bool) {
                let c = try r.person.contacts().first { $0["didPublicKey"]?.stringValue == r.bot.person.did }
                return (c?["graphExportEdgeId"]?.stringValue, c?["unconfirmed"] == true)
            }
            let settleBy = Date().addingTimeInterval(40)
            while Date() < settleBy {
                let pending = try wave.filter { try edgeAtVisitor($0).unconfirmed }
                if pending.isEmpty { break }
                for r in pending { _ = try lab.nearcard(["outbox", "--send", "--wait", "0"], home: r.person.home) }
                usleep(1_000_000)
            }
            var atBots: [String: [String: String]] = [:]
            for name in Set(names) {
                for line in try pg.sql("SELECT did || ' ' || coalesce(graphExportEdgeId, '-') FROM contact", database: name).split(separator: "\n") {
                    let parts = line.split(separator: " ").map(String.init)
                    if parts.count == 2 { atBots[name, default: [:]][parts[0]] = parts[1] == "-" ? nil : parts[1] }
                }
            }
            for r in wave {
                let (visitorEdge, unconfirmed) = try edgeAtVisitor(r)
                let botEdge = atBots[r.bot.database]?[r.person.did]
                let what =
                    "\(mode.rawValue) \(Int(duration)) s \(r.phase), \(r.visitor.rawValue): exit \(r.exit), visitor \(visitorEdge ?? "none")\(unconfirmed ? " (unconfirmed)" : ""), bot \(botEdge ?? "none")"
                if visitorEdge != botEdge || (r.exit == 0 && botEdge == nil) || unconfirmed { failures.append(what) }
            }
        }
        return (count, failures)
    }

    /// The same for SQLite: a bot whose book's disk (a tmpfs of 4 MiB as its home) fills up while
    /// visitors' sessions are held at each step, stays full for a while, then has room again. Every
    /// pair of books then holds the same exchange or neither does, and a visitor told "exchanged" is
    /// held by the bot with that edge.
    @Test(.timeLimit(.minutes(10))) func aFullDiskNeverSplitsAnExchange() async throws {
        try #require(TestAccount.isRoot, "mounting the bot's disk needs root")
        let (count, failures) = try await withCheckedThrowingContinuation { (done: CheckedContinuation<(Int, [String]), any Error>) in
            Thread { done.resume(with: Result { try self.fullDisk() }) }.start()
        }
        #expect(failures.isEmpty, "\(failures.count) split or unsettled of \(count):\n\(failures.joined(separator: "\n"))")
    }

    func fullDisk() throws -> (Int, [String]) {
        let lab = try Lab("sd")
        let relay = CLI.packageRoot.appendingPathComponent("Tests/Interop/fault_relay.py").path
        let account = try #require(TestAccount.ids(TestAccount.name))
        // The bot's home: a small disk of its own, the test account's.
        let cli = try CLI()
        defer { cli.cleanUp() }
        try FileManager.default.createDirectory(at: cli.home, withIntermediateDirectories: true)
        let mounted = try ChildProcess.run([
            "/usr/bin/mount", "-t", "tmpfs", "-o", "size=4m,mode=0700,uid=\(account.uid),gid=\(account.gid)", "tmpfs", cli.home.path,
        ])
        guard mounted.code == 0 else { throw LabError("cannot mount a tmpfs: \(mounted.output)") }
        defer { _ = try? ChildProcess.run(["/usr/bin/umount", "-l", cli.home.path]) }
        #expect(try cli.run(["init", "--name", "Full Booth"]).code == 0)
        #expect(try cli.run(["card", "set", "--name", "Full Booth", "--company", "Disks"]).code == 0)
        let botDID = try #require(try cli.run(["id", "--json"]).json["did"]?.stringValue)
        let botLog = log("fullbot")
        let (_, port) = try lab.listen(home: cli.home, ["--accept", "all", "--no-discovery"], log: botLog)

        let resume = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-full-resume-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: resume) }
        var wave: [Run] = []
        let bot = Bot(person: try TestPerson(name: "unused"), port: port, database: "")
        defer { bot.person.cli.cleanUp() }
        var count = 0
        for phase in Self.phases {
            for visitor in [Visitor.alone, .besideNode] {
                for _ in 0..<Self.runs {
                    count += 1
                    let person = try TestPerson(name: "Visitor \(count)")
                    let relayLog = log("relay\(count)")
                    _ = try lab.spawn(
                        [
                            CLI.python, relay, "\(21000 + count)", "127.0.0.1", "\(port)", "--once", "--pause-after", "\(phase.after)",
                            "--resume-file", resume, "--source", "127.8.\(count / 200).\(count % 200 + 1)",
                        ], log: relayLog)
                    var run = Run(phase: phase.name, visitor: visitor, person: person, bot: bot, relayLog: relayLog)
                    if visitor == .besideNode {
                        run.node = try lab.listen(home: person.home, ["--accept", "all", "--no-discovery"], log: log("node\(count)")).0
                    }
                    wave.append(run)
                }
            }
        }
        defer {
            for r in wave {
                _ = r.node?.stop(after: 5)
                r.person.cli.cleanUp()
            }
        }
        func relayed(_ r: Run, _ what: String) -> Bool { ((try? String(contentsOf: r.relayLog, encoding: .utf8)) ?? "").contains(what) }
        try waitUntil("the relays to listen", seconds: 30) { wave.allSatisfy { relayed($0, "listening") } }
        for i in wave.indices {
            wave[i].exchange = try lab.spawn(
                [CLI.executable.path, "exchange", "127.0.0.1:\(21001 + i)", "--yes", "--json", "--home", wave[i].person.home.path],
                log: log("visitor\(i + 1)"))
        }
        try? waitUntil("every session to reach its step", seconds: 30) { wave.allSatisfy { relayed($0, "paused") || relayed($0, "\"frames\"") } }
        // The disk fills (as root: whatever the bot writes next finds no room), the sessions go on.
        let filler = cli.home.appendingPathComponent("filler").path
        _ = try ChildProcess.run(["/usr/bin/dd", "if=/dev/zero", "of=\(filler)", "bs=64k"])
        _ = FileManager.default.createFile(atPath: resume, contents: nil)
        sleep(8)
        try FileManager.default.removeItem(atPath: filler)
        for i in wave.indices { wave[i].exit = wave[i].exchange?.wait() ?? -1 }

        func edgeAtVisitor(_ r: Run) throws -> (edge: String?, unconfirmed: Bool) {
            let c = try r.person.contacts().first { $0["didPublicKey"]?.stringValue == botDID }
            return (c?["graphExportEdgeId"]?.stringValue, c?["unconfirmed"] == true)
        }
        let settleBy = Date().addingTimeInterval(40)
        while Date() < settleBy {
            let pending = try wave.filter { try edgeAtVisitor($0).unconfirmed }
            if pending.isEmpty { break }
            for r in pending { _ = try lab.nearcard(["outbox", "--send", "--wait", "0"], home: r.person.home) }
            usleep(1_000_000)
        }
        let listed = try cli.run(["contacts", "--json"])
        var atBot: [String: String] = [:]
        for c in listed.json.arrayValue ?? [] {
            if let did = c["didPublicKey"]?.stringValue { atBot[did] = c["graphExportEdgeId"]?.stringValue ?? "-" }
        }
        var failures: [String] = []
        for r in wave {
            let (visitorEdge, unconfirmed) = try edgeAtVisitor(r)
            let botEdge = atBot[r.person.did].flatMap { $0 == "-" ? nil : $0 }
            let what =
                "full disk \(r.phase), \(r.visitor.rawValue): exit \(r.exit), visitor \(visitorEdge ?? "none")\(unconfirmed ? " (unconfirmed)" : ""), bot \(botEdge ?? "none")"
            if visitorEdge != botEdge || (r.exit == 0 && botEdge == nil) || unconfirmed { failures.append(what) }
        }
        // The disk was full when it mattered: some exchange was refused for it (else nothing was tested).
        if wave.allSatisfy({ $0.exit == 0 }) { failures.append("every exchange went through: the full disk refused nothing") }
        // The bot kept serving: a full disk is no crash.
        let again = try TestPerson(name: "After")
        defer { again.cli.cleanUp() }
        let after = try lab.nearcard(["exchange", "127.0.0.1:\(port)", "--yes"], home: again.home)
        if after.code != 0 { failures.append("an exchange after the disk had room again: exit \(after.code): \(after.stderr)") }
        return (count, failures)
    }

    func waitUntil(_ what: String, seconds: Double, _ ready: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try ready() { return }
            usleep(100_000)
        }
        throw LabError("gave up waiting for \(what)")
    }
}
