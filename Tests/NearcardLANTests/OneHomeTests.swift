import Foundation
import NearcardCrypto
import NearcardProcess
import NearcardStore
import NearcardTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// One home, one mind (docs/JSONL.md, "The control socket"): while a node runs on a home, the commands
/// typed beside it — by a second process of the same unprivileged account — are that node's. Real
/// avahi-daemon in a namespace, the real executable as the test account.
@Suite(.serialized) struct OneHomeTests {
    func log(_ name: String) -> URL { FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-\(UUID().uuidString)-\(name).log") }

    func wait(_ what: String, seconds: Double = 20, _ ready: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try ready() { return }
            usleep(100_000)
        }
        throw LabError("gave up waiting for \(what)")
    }

    /// A node on `person`'s home speaking JSON lines, and its lines; returns once it is published.
    func jsonlNode(_ lab: Lab, _ person: TestPerson, _ extra: [String] = []) throws -> (ChildProcess, DiscoveryInteropTests.Lines) {
        let node = try lab.converse(
            [CLI.executable.path, "listen", "--jsonl", "--accept", "all", "--port", "0", "--home", person.home.path] + extra, log: log("node"))
        let lines = DiscoveryInteropTests.Lines(node)
        guard lines.wait(seconds: 20, { $0["event"] == "published" }) != nil else { throw LabError("the node did not publish") }
        return (node, lines)
    }

    /// `exchange` beside a running node is the node's exchange: its events, its contact, one outcome;
    /// the socket is the owner's alone (mode 0600, another user refused and logged).
    @Test func anExchangeTypedBesideTheNodeIsTheNodes() throws {
        let lab = try Lab("oh")
        let ada = try TestPerson(name: "Ada Lovelace")
        let grace = try TestPerson(name: "Grace Hopper")
        defer { for p in [ada, grace] { p.cli.cleanUp() } }
        _ = try lab.listen(home: ada.home, ["--accept", "all"], log: log("ada"))
        let (node, lines) = try jsonlNode(lab, grace)
        defer { _ = node.stop(after: 5) }

        let socket = grace.home.appendingPathComponent("control.sock").path
        var info = stat()
        #expect(lstat(socket, &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK && info.st_mode & 0o777 == 0o600, "control.sock, 0600")

        let r = try lab.nearcard(["exchange", "Ada Lovelace", "--yes", "--json", "--message", "via the node"], home: grace.home)
        #expect(r.code == 0, "\(r.stderr)")
        let id = try #require(r.json["id"]?.stringValue)
        // The node made it: its own events tell the same exchange, with the code the command printed.
        let completed = lines.wait(seconds: 5) { $0["event"] == "exchange.completed" && $0["contact"]?["id"]?.stringValue == id }
        #expect(completed?["myMessage"] == "via the node", "the node's exchange.completed names the command's contact")
        let requested = lines.wait(seconds: 1) { $0["event"] == "exchange.requested" && $0["role"] == "initiator" }
        #expect(requested?["sas"] == r.json["sas"] && r.json["sas"] != nil)
        #expect(try grace.contacts().count == 1)

        // A follow-up message goes out through the node too (no passphrase asked here: the node holds the keys).
        let m = try lab.nearcard(["message", "Ada Lovelace", "Sent by the node", "--json"], home: grace.home)
        #expect(m.code == 0 && m.json["state"] == "delivered", "\(m.stderr)")
        #expect(lines.wait(seconds: 5) { $0["event"] == "message.delivered" && $0["id"] == m.json["id"] } != nil, "the node's own delivery")
        // The outbox and the address books are the node's to send and sync too.
        let sent = try lab.nearcard(["outbox", "--send"], home: grace.home)
        #expect(sent.code == 0 && sent.stdout.contains("Tried 0 message(s): 0 delivered."), "\(sent.stdout) \(sent.stderr)")
        node.send(line: #"{"cmd":"outbox.send","ref":"o1"}"#)
        let outbox = lines.wait(seconds: 5) { $0["ref"] == "o1" }
        #expect(outbox?["ok"] == true && outbox?["messages"] == [] && outbox?["settled"] == [], "\(outbox ?? .null)")
        node.send(line: #"{"cmd":"addressbook.sync","ref":"a1"}"#)
        #expect(lines.wait(seconds: 5) { $0["ref"] == "a1" }?["books"] == [])
        node.send(line: #"{"cmd":"addressbook.sync","url":"https://dav.invalid/alice/","ref":"a2"}"#)
        let unknown = lines.wait(seconds: 5) { $0["ref"] == "a2" }
        #expect(unknown?["ok"] == false && unknown?["error"]?["code"] == "not_found", "\(unknown ?? .null)")

        // A failure is the node's too, with the exit code a lone command gives (8: nothing listens there).
        let refused = try lab.nearcard(["exchange", "127.0.0.1:9", "--yes", "--json", "--connect-budget", "2"], home: grace.home)
        #expect(refused.code == 8 && refused.stderr.contains("cannot connect to 127.0.0.1:9"), "\(refused.code) \(refused.stderr)")
        // --json says so on stdout too (issue 49: a program reads one result either way).
        #expect(refused.json["error"]?["exit"] == 8 && refused.json["error"]?["message"]?.stringValue?.contains("127.0.0.1:9") == true, "\(refused.stdout)")
        // Issue 52: said in the language of the terminal that asked, whatever the node's (its failure
        // carries the phrase); --json keeps the English.
        let german = try lab.run(
            [CLI.executable.path, "exchange", "127.0.0.1:9", "--yes", "--json", "--connect-budget", "2", "--home", grace.home.path],
            env: ["LANGUAGE": "de", "LANG": "C.UTF-8"])
        #expect(german.code == 8 && german.stderr.contains("keine Verbindung zu 127.0.0.1:9 möglich"), "\(german.stderr)")
        #expect(german.json["error"]?["message"]?.stringValue?.hasPrefix("cannot connect to 127.0.0.1:9") == true, "\(german.stdout)")

        // Another user (root, here) is refused at the socket and the node says so.
        if getuid() == 0 {
            let probe = try CLI.run(
                executable: CLI.python,
                [
                    "-c",
                    """
                    import socket, sys
                    s = socket.socket(socket.AF_UNIX)
                    s.connect(sys.argv[1])
                    try:
                        s.sendall(b'{"cmd":"peers"}\\n')
                        d = s.recv(100)
                    except OSError:
                        d = b''
                    print('closed' if d == b'' else repr(d))
                    """,
                    socket,
                ])
            #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "closed", "no answer to root: \(probe.stdout) \(probe.stderr)")
            let said = lines.wait(seconds: 5) { $0["event"] == "error" && ($0["message"]?.stringValue ?? "").contains("refused a connection from user id 0") }
            #expect(said != nil, "the refusal is logged")
        }
    }

    /// `id rotate-presence` and `card set --name` beside a running node: on the LAN before the command
    /// returns (no announcement with the old key or the old name after it), and used from the next exchange.
    @Test func aRotatedKeyAndANewNameFollowAtOnce() throws {
        let lab = try Lab("oh")
        let ada = try TestPerson(name: "Ada Lovelace")
        let grace = try TestPerson(name: "Grace Hopper")
        defer { for p in [ada, grace] { p.cli.cleanUp() } }
        try befriend(grace, with: ada)
        // The default rotation period (15 minutes): nothing but the commands announces again during the test.
        let (privateNode, _) = try jsonlNode(lab, ada, ["--private"])
        func adaAtGrace() throws -> [JSONValue] {
            try lab.nearcard(["peers", "--json", "--timeout", "2"], home: grace.home).list().filter { $0["name"] == .null }
        }
        try wait("Grace to recognise Ada") { try adaAtGrace().contains { $0["contact"]?["did"]?.stringValue == ada.did } }

        let rotated = try lab.nearcard(["id", "rotate-presence", "--json"], home: ada.home)
        #expect(rotated.code == 0 && rotated.json["rotated"] == true, "\(rotated.stderr)")
        // Returned: the old announcement is gone and the new one's tag is nobody's contact key.
        let after = try adaAtGrace()
        #expect(!after.isEmpty && after.allSatisfy { $0["contact"] == .null && $0["display"] == "someone nearby (private)" }, "\(after)")
        _ = privateNode.stop(after: 5)

        // A new name, announced before `card set` returns; an exchange by that name reaches Ada.
        let (node, lines) = try jsonlNode(lab, ada)
        defer { _ = node.stop(after: 5) }
        let name = "Ευάγγελος Παπαδόπουλος"
        let set = try lab.nearcard(["card", "set", "--name", name], home: ada.home)
        #expect(set.code == 0, "\(set.stderr)")
        let names = try lab.nearcard(["peers", "--json", "--timeout", "2"], home: grace.home).list().compactMap { $0["name"]?.stringValue }
        #expect(names.contains(name) && !names.contains("Ada Lovelace"), "\(names)")
        let r = try lab.nearcard(["exchange", name, "--yes", "--json"], home: grace.home)
        #expect(r.code == 0 && r.json["name"]?.stringValue == name, "\(r.stderr)")
        #expect(lines.wait(seconds: 5) { $0["event"] == "exchange.completed" } != nil)
    }

    /// A node killed without a goodbye leaves its socket behind: the next command works on its own, and
    /// the next node takes the home.
    @Test func aDeadNodesSocketBlocksNothing() throws {
        let lab = try Lab("oh")
        let ada = try TestPerson(name: "Ada Lovelace")
        let grace = try TestPerson(name: "Grace Hopper")
        defer { for p in [ada, grace] { p.cli.cleanUp() } }
        let (_, port) = try lab.listen(home: ada.home, ["--accept", "all", "--no-discovery"], log: log("ada"))
        let (graceNode, _) = try lab.listen(home: grace.home, ["--accept", "all", "--no-discovery"], log: log("grace"))
        graceNode.kill(SIGKILL)
        graceNode.wait()
        #expect(FileManager.default.fileExists(atPath: grace.home.appendingPathComponent("control.sock").path), "left behind")
        let alone = try lab.nearcard(["exchange", "127.0.0.1:\(port)", "--yes", "--json"], home: grace.home)
        #expect(alone.code == 0, "\(alone.stderr)")
        let (again, _) = try lab.listen(home: grace.home, ["--accept", "all", "--no-discovery"], log: log("grace-again"))
        defer { _ = again.stop(after: 5) }
        let through = try lab.nearcard(["exchange", "127.0.0.1:\(port)", "--yes", "--json"], home: grace.home)
        #expect(through.code == 0, "\(through.stderr)")
    }

    /// A fleet on one PostgreSQL book follows a change a command makes there within 2 s, every bot of it
    /// (LISTEN/NOTIFY; without it a bot reads the contacts again once a minute): a deleted contact is
    /// nobody to either bot, a new card name is announced by both.
    @Test func aFleetFollowsItsSharedBookAtOnce() throws {
        let lab = try Lab("oh")
        let store = try TestPostgres.shared.freshDatabase()
        let ada = try TestPerson(name: "Ada Lovelace")
        let admin = try TestPerson(name: "Fleet Admin")
        let bots = try (1...2).map { try TestPerson(name: "Booth \($0)") }
        defer { for p in [ada, admin] + bots { p.cli.cleanUp() } }
        // Ada is the fleet's contact, with her presence key (as an exchange with one bot would leave her).
        let book = try NearcardDatabase(location: try StoreLocation.parse(store))
        try handOver(ada, to: book)
        book.close()
        let policy = admin.home.appendingPathComponent("policy.json")
        try #"{"version": 1, "accept": "everyone"}"#.write(to: policy, atomically: true, encoding: .utf8)
        TestAccount.give(policy.path)
        let running = try bots.enumerated().map { n, bot in
            let p = try lab.converse(
                [CLI.executable.path, "bot", "--policy", policy.path, "--home", bot.home.path, "--store", store, "--port", "0", "--node-name", "bot\(n + 1)"],
                log: log("bot\(n + 1)"))
            return (p, DiscoveryInteropTests.Lines(p))
        }
        defer { for (p, _) in running { _ = p.stop(after: 5) } }
        for (_, lines) in running { #expect(lines.wait(seconds: 20) { $0["event"] == "published" } != nil, "a bot did not publish") }
        let (adaNode, _) = try jsonlNode(lab, ada, ["--private"])
        defer { _ = adaNode.stop(after: 5) }

        var asked = 0
        /// Whether the bot's own view of the LAN (its `peers` reply) recognises Ada.
        func recognises(_ bot: Int) -> Bool {
            asked += 1
            let ref = "q\(asked)"
            running[bot].0.send(line: #"{"cmd":"peers","ref":"\#(ref)"}"#)
            let reply = running[bot].1.wait(seconds: 5) { $0["ref"]?.stringValue == ref }
            return reply?["peers"]?.arrayValue?.contains { $0["contact"]?["did"]?.stringValue == ada.did } == true
        }
        try wait("both bots to recognise Ada") { recognises(0) && recognises(1) }

        let deleted = try lab.nearcard(["contacts", "delete", "Ada Lovelace", "--yes", "--store", store], home: admin.home)
        #expect(deleted.code == 0, "\(deleted.stderr)")
        let returned = Date()
        try wait("both bots to forget Ada", seconds: 10) { !recognises(0) && !recognises(1) }
        let took = Date().timeIntervalSince(returned)
        #expect(took < 2, "a deleted contact reached the fleet after \(took) s")

        let renamed = try lab.nearcard(["card", "set", "--name", "Nearcard Booth", "--store", store], home: admin.home)
        #expect(renamed.code == 0, "\(renamed.stderr)")
        for (_, lines) in running {
            let said = lines.wait(seconds: 2) { $0["event"] == "published" && ($0["instance"]?.stringValue ?? "").hasPrefix("Nearcard Booth") }
            #expect(said != nil, "a bot did not announce the fleet's new name within 2 s")
        }
    }
}
