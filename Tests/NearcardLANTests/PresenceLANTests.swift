import Foundation
import NearcardCrypto
import NearcardModel
import NearcardProcess
import NearcardSimulation
import NearcardStore
import NearcardTestSupport
import Testing

/// Runs `body` on `person`'s book, opened by this process (root) — made first by the CLI, as the nodes'
/// account, when there is none yet — and gives its files back to that account afterwards.
func withBook<T>(of person: TestPerson, _ body: (NearcardDatabase) throws -> T) throws -> T {
    let r = try person.cli.run(["contacts", "--json"])
    guard r.code == 0 else { throw LabError("contacts: \(r.stderr)") }
    let book = try NearcardDatabase(home: NearcardHome(path: person.home.path))
    defer {
        book.close()
        giveBack(person)
    }
    return try body(book)
}

/// `person`'s presence key, made on first use.
func presenceKey(of person: TestPerson) throws -> [UInt8] {
    try withBook(of: person) { try $0.presenceKey() }
}

/// What an exchange hands over (docs/PROTOCOL.md §3): `person`'s presence key, kept with the contact
/// `book` holds for them (added when there is none) — for tests that need contacts recognising each
/// other without an exchange between them. Returns the key.
@discardableResult
func handOver(_ person: TestPerson, to book: NearcardDatabase) throws -> [UInt8] {
    let key = try presenceKey(of: person)
    let name = try person.cli.run(["id", "--json"]).json["name"]?.stringValue ?? "?"
    try book.keep(
        Contact(card: Card(name: name), source: .proximity, verificationStatus: .verified, receivedAt: Date(), didPublicKey: person.did),
        presenceKey: key)
    return key
}

/// `person` as a contact of `holder`, with `person`'s presence key, in `holder`'s own book.
@discardableResult
func befriend(_ holder: TestPerson, with person: TestPerson) throws -> [UInt8] {
    try withBook(of: holder) { try handOver(person, to: $0) }
}

/// The book's files back to the nodes' account, after this process (root) wrote to them.
func giveBack(_ person: TestPerson) {
    for suffix in ["", "-wal", "-shm"] {
        let path = person.home.appendingPathComponent("nearcard.sqlite" + suffix).path
        if FileManager.default.fileExists(atPath: path) { TestAccount.give(path) }
    }
}

/// Presence nobody can track, that contacts still recognise (issue 25 part 1), with real parts: a node
/// and a passive python-zeroconf observer in network namespaces with their own avahi-daemons. The
/// observer records every announcement of the node across three rotations, a restart, a change of
/// mode (private → default → private) and a move to a second network: in private mode no value links
/// two of them (the protocol version and the default port aside, which every node shares, and the
/// addresses); a contact's node recognises every one, a stranger's none.
@Suite(.serialized) struct PresenceLANTests {
    func log(_ name: String) -> URL { FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-\(UUID().uuidString)-\(name).log") }

    /// Waits (up to `seconds`, to fail rather than hang) until `ready` holds.
    func wait(_ what: String, seconds: Double = 120, _ ready: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try ready() { return }
            usleep(200_000)
        }
        throw LabError("gave up waiting for \(what)")
    }

    /// The observer's records so far.
    func records(_ file: URL) -> [JSONValue] {
        ((try? String(contentsOf: file, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { try? JSONParser.parse(String($0)) }
    }

    /// Starts Ada's node in `lab` and waits until it is published.
    func start(_ lab: Lab, _ ada: TestPerson, _ args: [String]) throws -> ChildProcess {
        let out = log("ada")
        let p = try lab.spawn(
            [
                CLI.executable.path, "listen", "--home", ada.home.path, "--port", "7447", "--accept", "all",
                "--presence-rotation", "3",
            ] + args, log: out)
        try wait("Ada's node to publish") {
            guard p.isRunning else { throw LabError("listen exited: \((try? String(contentsOf: out, encoding: .utf8)) ?? "")") }
            return ((try? String(contentsOf: out, encoding: .utf8)) ?? "").contains("Published on the LAN")
        }
        return p
    }

    func stop(_ p: ChildProcess) {
        p.kill(SIGTERM)
        p.wait()
    }

    /// `nearcard peers --json` as `person` sees it from `lab`, until `until` holds for the list.
    func peers(_ lab: Lab, as person: TestPerson, until: ([JSONValue]) -> Bool) throws -> [JSONValue] {
        var last: [JSONValue] = []
        try wait("peers as \(person.home.lastPathComponent)") {
            last = try lab.nearcard(["peers", "--json", "--timeout", "2"], home: person.home).list()
            return until(last)
        }
        return last
    }

    @Test func nothingLinksAPrivateNodesAnnouncementsButItsContactsKey() throws {
        let (node1, watch1) = try Lab.pair()
        let (node2, watch2) = try Lab.pair()
        let ada = try TestPerson(name: "Ada Lovelace")
        let grace = try TestPerson(name: "Grace Hopper")
        let stranger = try TestPerson(name: "Stranger")
        defer { for p in [ada, grace, stranger] { p.cli.cleanUp() } }
        let key = try befriend(grace, with: ada)
        let observer = CLI.packageRoot.appendingPathComponent("Tests/Interop/presence_observer.py").path
        let seen1 = log("observed-1")
        let seen2 = log("observed-2")
        for (lab, file) in [(watch1, seen1), (watch2, seen2)] {
            let out = log("observer")
            let p = try lab.spawn([CLI.python, observer, "--ip", lab.vethIPv4, "--out", file.path], log: out)
            try wait("the observer") {
                guard p.isRunning else { throw LabError("the observer exited: \((try? String(contentsOf: out, encoding: .utf8)) ?? "")") }
                return ((try? String(contentsOf: out, encoding: .utf8)) ?? "").contains("observing")
            }
        }

        // Network 1, private: the first publication and three rotations (3 s apart).
        var node = try start(node1, ada, ["--private"])
        try wait("four announcements") { records(seen1).count >= 4 }
        // Grace holds Ada's presence key: she sees "Ada Lovelace (contact)"; the stranger sees someone.
        let atGrace = try peers(watch1, as: grace) { $0.contains { $0["contact"]?["did"]?.stringValue == ada.did } }
        let ada1 = try #require(atGrace.first { $0["contact"]?["did"]?.stringValue == ada.did })
        #expect(ada1["display"] == "Ada Lovelace (contact)" && ada1["name"] == .null && ada1["fingerprint"] == nil, "\(ada1)")
        let atStranger = try peers(watch1, as: stranger) { !$0.isEmpty }
        #expect(atStranger.allSatisfy { $0["contact"] == .null && $0["display"] == "someone nearby (private)" && $0["name"] == .null }, "\(atStranger)")
        let rotated = records(seen1).count

        // A restart; a change of mode, private → default → private.
        stop(node)
        node = try start(node1, ada, ["--private"])
        try wait("the restart's announcement") { records(seen1).count > rotated }
        stop(node)
        node = try start(node1, ada, [])
        try wait("the default-mode announcement") { records(seen1).contains { $0["txt"]?["name"] == "Ada Lovelace" } }
        stop(node)
        let beforeBack = records(seen1).count
        node = try start(node1, ada, ["--private"])
        try wait("private mode again") { records(seen1).count > beforeBack && records(seen1).last?["txt"]?["name"] == nil }
        stop(node)

        // A move to a second network; Grace's node there recognises Ada again, on the same key.
        node = try start(node2, ada, ["--private"])
        try wait("the announcement on the second network") { !records(seen2).isEmpty }
        let there = try peers(watch2, as: grace) { $0.contains { $0["contact"]?["did"]?.stringValue == ada.did } }
        #expect(there.contains { $0["display"] == "Ada Lovelace (contact)" })
        stop(node)

        let all = records(seen1) + records(seen2)
        let privateOnes = all.filter { $0["txt"]?["name"] == nil }
        let defaultOnes = all.filter { $0["txt"]?["name"] != nil }
        #expect(privateOnes.count >= 7 && !defaultOnes.isEmpty, "\(all.count) announcements recorded")
        let hostNames = Set([node1.name, watch1.name, node2.name, watch2.name, ProcessInfo.processInfo.hostName].map { $0.lowercased() })
        for a in all {
            let txt = a["txt"]?.objectValue ?? [:]
            let host = a["host"]?.stringValue ?? ""
            // `vmax` is the same in every version-3 node's record (§3): it links nothing.
            #expect(Set(txt.keys).isSubset(of: ["v", "vmax", "t", "name"]) && txt["v"] == "2" && txt["vmax"] == "3", "no fingerprint, nothing else: \(txt)")
            #expect(host.range(of: #"^nc-[0-9a-f]{16}\.local\.$"#, options: .regularExpression) != nil, "a host name of its own: \(host)")
            #expect(!hostNames.contains(String(host.split(separator: ".").first ?? "")), "not the machine's host name")
            #expect(a["port"] == 7447)
            // Every tag resolves with Ada's presence key, and with no other.
            let tag = try #require(txt["t"]?.stringValue)
            #expect(Presence.matches(tag, key: key) && !Presence.matches(tag, key: Presence.makeKey()))
        }
        for a in privateOnes {
            let instance = a["instance"]?.stringValue ?? ""
            #expect(instance.range(of: #"^nearcard-[0-9a-f]{8}$"#, options: .regularExpression) != nil, "\(instance)")
        }
        for a in defaultOnes { #expect(a["instance"] == "Ada Lovelace" && a["txt"]?["name"] == "Ada Lovelace") }
        // No two announcements share an instance name (default mode's chosen name aside), a tag or a host.
        for (i, x) in all.enumerated() {
            for y in all[(i + 1)...] {
                if x["txt"]?["name"] == nil || y["txt"]?["name"] == nil { #expect(x["instance"] != y["instance"], "\(x) \(y)") }
                #expect(x["txt"]?["t"] != y["txt"]?["t"] && x["host"] != y["host"], "\(x) \(y)")
            }
        }
    }

    /// A contact deleted (here by the CLI, another process of the same home) is a stranger to the node
    /// that is running when the command returns: not at its next announcement (up to 15 minutes away),
    /// nor at its next look at the book.
    @Test func aDeletedContactIsAStrangerAtOnce() throws {
        let (node, watch) = try Lab.pair()
        let ada = try TestPerson(name: "Ada Lovelace")
        let grace = try TestPerson(name: "Grace Hopper")
        defer { for p in [ada, grace] { p.cli.cleanUp() } }
        _ = try befriend(grace, with: ada)
        // The default period (15 minutes): no new announcement comes during the test to re-resolve it.
        let out = log("ada")
        let adaNode = try node.spawn([CLI.executable.path, "listen", "--home", ada.home.path, "--port", "7447", "--accept", "all"], log: out)
        defer { stop(adaNode) }
        try wait("Ada's node to publish") { ((try? String(contentsOf: out, encoding: .utf8)) ?? "").contains("Published on the LAN") }
        let graceNode = try watch.converse(
            [CLI.executable.path, "listen", "--jsonl", "--accept", "all", "--port", "0", "--home", grace.home.path], log: log("grace"))
        defer { _ = graceNode.stop(after: 5) }
        let lines = DiscoveryInteropTests.Lines(graceNode)
        var asked = 0
        func adaListed() -> JSONValue? {
            asked += 1
            _ = graceNode.send(line: #"{"cmd":"peers","ref":"p\#(asked)"}"#)
            let reply = lines.wait(seconds: 10) { $0["ref"]?.stringValue == "p\(asked)" }
            return reply?["peers"]?.arrayValue?.first { $0["port"] == 7447 }
        }
        try wait("Grace's node to recognise Ada") { adaListed()?["display"] == "Ada Lovelace (contact)" }
        #expect(try watch.nearcard(["contacts", "delete", "Ada Lovelace", "--yes"], home: grace.home).code == 0)
        // No wait: the command returns once the running node has dropped her (the control socket).
        let after = adaListed()
        #expect(after?["contact"] == .null && after?["display"] == "Ada Lovelace", "\(after ?? .null)")
    }

    /// Withdrawing recognition: after `id rotate-presence`, the next node Ada starts is nobody to Grace.
    @Test func rotatingThePresenceKeyWithdrawsRecognition() throws {
        let (node, watch) = try Lab.pair()
        let ada = try TestPerson(name: "Ada Lovelace")
        let grace = try TestPerson(name: "Grace Hopper")
        defer { for p in [ada, grace] { p.cli.cleanUp() } }
        _ = try befriend(grace, with: ada)
        var p = try start(node, ada, ["--private"])
        _ = try peers(watch, as: grace) { $0.contains { $0["display"] == "Ada Lovelace (contact)" } }
        stop(p)
        let r = try ada.cli.run(["id", "rotate-presence", "--json"])
        #expect(r.code == 0 && r.json["rotated"] == true, "\(r.stderr)")
        p = try start(node, ada, ["--private"])
        let after = try peers(watch, as: grace) { !$0.isEmpty }
        #expect(after.allSatisfy { $0["contact"] == .null && $0["display"] == "someone nearby (private)" }, "\(after)")
        stop(p)
    }
}
