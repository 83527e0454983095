import Foundation
import NearcardCrypto
import NearcardProcess
import NearcardStore
import NearcardTestSupport
import Testing

/// A 4 MiB file system of its own (tmpfs; mounting needs root) for a home to run out of room on.
struct SmallDisk {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-full-\(UUID().uuidString)")

    init() throws {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        guard try CLI.run(executable: "/usr/bin/mount", ["-t", "tmpfs", "-o", "size=4m,mode=0755", "tmpfs", url.path]).code == 0 else {
            throw LabError("cannot mount a tmpfs at \(url.path)")
        }
    }

    /// A copy of `person`'s home in use on this disk: its database exists, made with every migration
    /// before the disk fills up.
    func holding(_ person: TestPerson) throws -> URL {
        guard try person.cli.run(["contacts", "--json"]).code == 0 else { throw LabError("no book for \(person.home.path)") }
        let home = url.appendingPathComponent("home")
        guard try CLI.run(executable: "/usr/bin/cp", ["-a", person.home.path, home.path]).code == 0 else { throw LabError("cannot copy the home") }
        return home
    }

    func remove() {
        _ = try? CLI.run(executable: "/usr/bin/umount", [url.path])
        try? FileManager.default.removeItem(at: url)
    }
}

/// End-to-end exchanges with the real daemons: avahi-daemon and D-Bus in network namespaces,
/// the real `nearcard` executable, TCP on loopback or a veth pair.
@Suite(.serialized) struct LANExchangeTests {
    func log(_ name: String) -> URL { FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-\(UUID().uuidString)-\(name).log") }

    /// The fields issue 4 promises on both contacts.
    func checkContact(_ c: JSONValue, of peer: TestPerson, theirs: String?, mine: String?) throws {
        #expect(c["source"] == "proximity")
        #expect(c["verificationStatus"] == "verified")
        #expect(c["didPublicKey"]?.stringValue == peer.did)
        let id = try peer.cli.run(["id", "--json"]).json
        #expect(c["pubKey"] == id["pubKey"] && c["signPubKey"] == id["signPubKey"])
        #expect(c["sealedRoute"]?.stringValue?.isEmpty == false)
        #expect(try Base64.decode(c["exchangeSignature"]!.stringValue!).count == 64)
        #expect(try Base64.decode(c["myExchangeSignature"]!.stringValue!).count == 64)
        #expect(c["exchangeTimestamp"]?.stringValue != nil)
        #expect(c["theirEphemeralMessage"]?.stringValue == theirs)
        #expect(c["myEphemeralMessage"]?.stringValue == mine)
        #expect(c["graphExportEdgeId"]?.stringValue?.count == 32)
    }

    /// Two nodes on one machine (one namespace, avahi on its loopback): found by name over DNS-SD.
    @Test func twoNodesOverLoopbackFindEachOtherAndExchange() throws {
        let lab = try Lab("lo")
        let ada = try TestPerson(name: "Ada Lovelace", card: ["--email", "ada@example.org", "--company", "Analytical Engines", "--title", "Programmer"])
        let grace = try TestPerson(name: "Grace Hopper", card: ["--company", "US Navy", "--title", "Rear Admiral", "--phone", "+1 555 0100"])
        defer {
            ada.cli.cleanUp()
            grace.cli.cleanUp()
        }
        try grace.cli.run(["share", "--fields", "name,company,phone"])
        _ = try lab.listen(home: ada.home, ["--accept", "all", "--message", "Hello from Ada"], log: log("ada"))

        let peers = try lab.nearcard(["peers", "--json", "--timeout", "2"], home: grace.home).list()
        let found = try #require(peers.first { $0["name"] == "Ada Lovelace" })
        #expect(found["fingerprint"] == nil && found["display"] == "Ada Lovelace" && found["contact"] == .null)
        // A mistyped name: nothing dialled, and the name meant is suggested (issue 51, point 10).
        let typo = try lab.nearcard(["exchange", "Ada Lovelcae", "--yes", "--timeout", "2"], home: grace.home)
        #expect(typo.code == 2 && typo.stderr.contains("did you mean \"Ada Lovelace\"?"), "\(typo.code): \(typo.stderr)")

        let r = try lab.nearcard(["exchange", "Ada Lovelace", "--yes", "--message", "Hi Ada, Grace here", "--json"], home: grace.home)
        #expect(r.code == 0, "\(r.stderr)")
        #expect(r.json["name"] == "Ada Lovelace")
        #expect(r.json["sas"]?.stringValue?.count == 7)

        let atGrace = try #require(grace.contacts().first)
        try checkContact(atGrace, of: ada, theirs: "Hello from Ada", mine: "Hi Ada, Grace here")
        #expect(atGrace["company"] == "Analytical Engines" && atGrace["email"] == .null, "only Ada's shared fields")
        // The listener stores its contact as the exchange ends; allow it a moment.
        var atAda: JSONValue?
        for _ in 0..<50 where atAda == nil {
            atAda = try ada.contacts().first
            if atAda == nil { usleep(100_000) }
        }
        try checkContact(try #require(atAda), of: grace, theirs: "Hi Ada, Grace here", mine: "Hello from Ada")
        #expect(atAda?["phone"] == "+1 555 0100" && atAda?["title"] == .null, "only Grace's shared fields")
        #expect(atAda?["graphExportEdgeId"] == atGrace["graphExportEdgeId"], "both sides name the edge alike")
        #expect(atAda?["exchangeSignature"] == atGrace["myExchangeSignature"])

        // Ada's zk code scanned afterwards (Ada now trusted: met in person) merges into the contact:
        // it stays an in-person, verified contact with both messages, and gains the email.
        let zk = try ada.cli.run(["qr", "make", "--format", "zk", "--text", "--fields", "name,email"]).stdout
        let scan = try grace.cli.run(["qr", "scan", zk.trimmingCharacters(in: .whitespacesAndNewlines)])
        #expect(scan.stdout.contains("already in your contacts: 1 field updated (email)"), "\(scan.stdout) \(scan.stderr)")
        let merged = try grace.contacts()
        #expect(merged.count == 1)
        try checkContact(try #require(merged.first), of: ada, theirs: "Hello from Ada", mine: "Hi Ada, Grace here")
        #expect(merged.first?["email"] == "ada@example.org" && merged.first?["company"] == "Analytical Engines")
        #expect(merged.first?["id"] == atGrace["id"])
    }

    /// An exchange into a home with no room left is refused before anything is sent: the listener
    /// never hears of it, so neither side holds a contact the other lacks.
    @Test(.enabled(if: getuid() == 0, "mounting the small file system needs root"))
    func aFullHomeSendsNothing() throws {
        // The tests' nearcard runs as an unprivileged account when they have root (Accounts): the
        // full disk is that user's too.
        let ada = try TestPerson(name: "Ada")
        let grace = try TestPerson(name: "Grace")
        defer {
            ada.cli.cleanUp()
            grace.cli.cleanUp()
        }
        let disk = try SmallDisk()
        defer { disk.remove() }
        let home = try disk.holding(grace)
        // Fill the disk to 400 KiB short of full: the database still opens, a write might not land.
        var fs = statvfs()
        #expect(statvfs(disk.url.path, &fs) == 0)
        let fill = Int(UInt64(fs.f_bavail) * UInt64(fs.f_frsize)) - 400 * 1024
        try Data(count: max(fill, 0)).write(to: disk.url.appendingPathComponent("fill"))
        // The lab's namespaces see mounts made before them.
        let lab = try Lab("fh")
        let (_, port) = try lab.listen(home: ada.home, ["--accept", "all", "--no-discovery"], log: log("ada"))
        let r = try lab.nearcard(["exchange", "127.0.0.1:\(port)", "--yes"], home: home)
        #expect(r.code == 5, "\(r.stdout) \(r.stderr)")
        #expect(r.stderr.contains("is full") && r.stderr.contains("nothing was sent"), "\(r.stderr)")
        #expect(!r.stdout.contains("Connecting"), "refused before looking for the peer")
        usleep(300_000)
        #expect(try ada.contacts().isEmpty)
        // Not a byte left: opening the database itself fails, and still says why, not "disk I/O error".
        _ = try CLI.run(executable: "/usr/bin/dd", ["if=/dev/zero", "of=\(disk.url.path)/fill2", "bs=4096"])
        for args in [["exchange", "127.0.0.1:\(port)", "--yes"], ["contacts", "add", "--name", "Zed"]] {
            let full = try lab.nearcard(args, home: home)
            #expect(full.code == 5 && full.stderr.contains("is full") && !full.stderr.contains("I/O error"), "\(args): \(full.stderr)")
        }
        try FileManager.default.removeItem(at: disk.url.appendingPathComponent("fill2"))
        // Room again: the same exchange goes through.
        try FileManager.default.removeItem(at: disk.url.appendingPathComponent("fill"))
        let again = try lab.nearcard(["exchange", "127.0.0.1:\(port)", "--yes"], home: home)
        #expect(again.code == 0, "exit \(again.code): \(again.stdout) \(again.stderr)")
    }

    /// A disk that fills while the other person decides: the cards cross, this side's book refuses the
    /// contact, and that is a storage failure (exit 5, the store's own words), not a bug (70); the other
    /// side hears that nothing was kept — and not our store's words — and keeps nothing either.
    @Test(.enabled(if: getuid() == 0, "mounting the small file system needs root"))
    func aDiskThatFillsDuringTheExchangeIsAStorageFailure() throws {
        let ada = try TestPerson(name: "Ada")
        let grace = try TestPerson(name: "Grace")
        defer {
            ada.cli.cleanUp()
            grace.cli.cleanUp()
        }
        let disk = try SmallDisk()
        defer { disk.remove() }
        let home = try disk.holding(grace)
        let lab = try Lab("fd")
        let adaNode = try lab.converse(
            [CLI.executable.path, "listen", "--jsonl", "--accept", "ask", "--no-discovery", "--port", "0", "--home", ada.home.path], log: log("ada"))
        defer { _ = adaNode.stop(after: 5) }
        let lines = DiscoveryInteropTests.Lines(adaNode)
        let port = try #require(lines.wait(seconds: 15) { $0["event"] == "started" }?["port"]?.integerValue)
        let out = log("grace")
        let dial = try lab.spawn([CLI.executable.path, "exchange", "127.0.0.1:\(port)", "--yes", "--home", home.path], log: out)
        let request = try #require(lines.wait(seconds: 15) { $0["event"] == "exchange.requested" }?["id"]?.stringValue)
        // Not a byte left, now that Grace's side has checked it could store and dialled.
        _ = try CLI.run(executable: "/usr/bin/dd", ["if=/dev/zero", "of=\(disk.url.path)/fill", "bs=4096"])
        #expect(adaNode.send(line: #"{"cmd":"accept","id":"\#(request)"}"#))
        let code = dial.wait()
        let said = (try? String(contentsOf: out, encoding: .utf8)) ?? ""
        #expect(code == 5, "exit \(code): \(said)")
        #expect(said.contains("was not kept: this side could not store it") && said.contains("is full"), "\(said)")
        let failed = lines.wait(seconds: 10) { $0["event"] == "exchange.failed" }
        #expect(failed?["code"] == "internal_error" && failed?["byPeer"] == true, "\(failed ?? .null)")
        let reason = failed?["reason"]?.stringValue ?? ""
        #expect(reason.contains("could not store the exchange") && !reason.contains(disk.url.path) && !reason.contains("full"), "\(reason)")
        #expect(try ada.contacts().isEmpty)
        try FileManager.default.removeItem(at: disk.url.appendingPathComponent("fill"))
        #expect(try lab.nearcard(["contacts", "--json"], home: home).list().isEmpty, "nothing kept here either")
    }

    /// Two "laptops": two namespaces joined by a veth pair, each with its own avahi-daemon.
    @Test func twoLaptopsExchangeThroughDiscovery() throws {
        let (a, b) = try Lab.pair()
        let ada = try TestPerson(name: "Ada Lovelace", card: ["--company", "Analytical Engines"])
        let grace = try TestPerson(name: "Grace Hopper", card: ["--company", "US Navy"])
        defer {
            ada.cli.cleanUp()
            grace.cli.cleanUp()
        }
        _ = try a.listen(home: ada.home, ["--accept", "all"], log: log("ada"))

        // Found on B's side over its own avahi-daemon, with IPv4 and IPv6 link-local addresses on the veth
        // (the IPv6 address appears once duplicate-address detection on the new link is done).
        var peer: JSONValue?
        for _ in 0..<10 {
            peer = try b.nearcard(["peers", "--json", "--timeout", "1.5"], home: grace.home).json.arrayValue?.first
            if peer?["addresses"]?.arrayValue?.count ?? 0 >= 2 { break }
        }
        let p = try #require(peer)
        let addresses = p["addresses"]?.arrayValue ?? []
        #expect(addresses.contains { $0["ip"]?.stringValue == "10.77.0.1" })
        #expect(addresses.contains { ($0["ip"]?.stringValue ?? "").hasPrefix("fe80:") && $0["interface"]?.stringValue == "nc-\(b.name)" })

        let byId = try #require(p["id"]?.stringValue)
        let r = try b.nearcard(["exchange", byId, "--yes", "--json"], home: grace.home)
        #expect(r.code == 0, "\(r.stderr)")
        #expect(r.json["didPublicKey"]?.stringValue == ada.did)

        // And the IPv6 link-local address with its scope, dialled directly.
        let ll = try #require(addresses.first { ($0["ip"]?.stringValue ?? "").hasPrefix("fe80:") })
        let target = "[\(ll["ip"]!.stringValue!)%nc-\(b.name)]:\(p["port"]!.integerValue!)"
        let r6 = try b.nearcard(["exchange", target, "--yes"], home: grace.home)
        #expect(r6.code == 0, "\(r6.stderr)")
        #expect(try grace.contacts().count == 1, "re-exchanging updates the same contact")
    }

    /// One node per home: a second `listen` (or `bot`) of a home that serves says which node runs
    /// (exit 4); a second `ui` opens the running page — on whatever port it is — and leaves it be (its
    /// ui-token stays).
    @Test func aHomeHasOneNode() throws {
        let lab = try Lab("on")
        let ada = try TestPerson(name: "Ada")
        defer { ada.cli.cleanUp() }
        let (first, port) = try lab.listen(home: ada.home, ["--accept", "all", "--no-discovery"], log: log("ada"))
        for command in ["listen", "bot"] {
            var args = [command, "--no-discovery", "--port", "0"]
            if command == "bot" { args += ["--policy", CLI.packageRoot.appendingPathComponent("examples/bot/policy.json").path] }
            let second = try lab.nearcard(args, home: ada.home)
            #expect(second.code == 4, "\(command): \(second.code) \(second.stderr)")
            #expect(second.stderr.contains("already has a running node, nearcard listen (pid ") && second.stderr.contains("port \(port))"), "\(second.stderr)")
        }
        first.kill(SIGTERM)
        first.wait()
        let uiLog = log("ui")
        let ui = try lab.spawn(
            [
                CLI.executable.path, "ui", "--home", ada.home.path, "--no-browser", "--no-discovery", "--port", "0", "--ui-port", "7458", "--consent-timeout",
                "2",
            ],
            log: uiLog)
        defer { ui.kill(SIGTERM) }
        var up = false
        for _ in 0..<100 where !up {
            up = ((try? String(contentsOf: uiLog, encoding: .utf8)) ?? "").contains("Nearcard's page: ")
            if !up { usleep(100_000) }
        }
        #expect(up)
        let token = try String(contentsOf: ada.home.appendingPathComponent("ui-token"), encoding: .utf8)
        let again = try lab.nearcard(["ui", "--no-browser", "--no-discovery", "--ui-port", "7459"], home: ada.home)
        #expect(again.code == 0 && again.stdout.contains("Nearcard is already open at http://127.0.0.1:7458/?token="), "\(again.stdout) \(again.stderr)")
        #expect(try String(contentsOf: ada.home.appendingPathComponent("ui-token"), encoding: .utf8) == token, "the running page's token stays")
        let listen = try lab.nearcard(["listen", "--no-discovery", "--port", "0"], home: ada.home)
        #expect(listen.code == 4 && listen.stderr.contains("nearcard ui"), "\(listen.stderr)")

        // What `ui` says at its terminal (issue 35.14): that nothing was opened (--no-browser), that no
        // desktop notifications can be shown (no session bus here), and each request and its end.
        var said = (try? String(contentsOf: uiLog, encoding: .utf8)) ?? ""
        #expect(said.contains("nothing was opened") && !said.contains("is open at"), "\(said)")
        if ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] == nil {
            #expect(said.contains("desktop notifications are not available here"), "\(said)")
        }
        let grace = try TestPerson(name: "Grace")
        defer { grace.cli.cleanUp() }
        let uiPort = Int(said.range(of: "on port ").map { said[$0.upperBound...].prefix { $0.isNumber } } ?? "") ?? 0
        let dial = try lab.nearcard(["exchange", "127.0.0.1:\(uiPort)", "--yes"], home: grace.home)
        #expect(dial.code == 7, "nobody answered on the page within 2 s: \(dial.stderr)")
        usleep(500_000)
        said = (try? String(contentsOf: uiLog, encoding: .utf8)) ?? ""
        #expect(said.contains("→ Exchange request from Grace (check code ") && said.contains("answer it on the page"), "\(said)")
        #expect(said.contains("✘ Exchange with Grace failed"), "\(said)")
    }

    /// §6.2: dialling an address is the stranger flow even when the person there is already a contact
    /// (without a tag the dialler recognised no one): the second exchange by address goes through the
    /// same way, and updates the one contact each side holds.
    @Test func aContactDialledByAddressIsDialledAsAStranger() throws {
        let lab = try Lab("da")
        let ada = try TestPerson(name: "Ada")
        let grace = try TestPerson(name: "Grace")
        defer {
            ada.cli.cleanUp()
            grace.cli.cleanUp()
        }
        let (_, port) = try lab.listen(home: ada.home, ["--accept", "all", "--no-discovery"], log: log("ada"))
        for _ in 0..<2 {
            let r = try lab.nearcard(["exchange", "127.0.0.1:\(port)", "--yes", "--json"], home: grace.home)
            #expect(r.code == 0 && r.json["didPublicKey"]?.stringValue == ada.did, "\(r.stdout) \(r.stderr)")
        }
        #expect(try grace.contacts().count == 1)
        usleep(300_000)
        #expect(try ada.contacts().count == 1)
    }

    /// A listener whose allowlist does not hold the dialer: declined on both sides, nothing stored.
    @Test func declinedConsentStoresNothing() throws {
        let lab = try Lab("dc")
        let ada = try TestPerson(name: "Ada")
        let grace = try TestPerson(name: "Grace")
        let other = try TestPerson(name: "Other")
        defer {
            ada.cli.cleanUp()
            grace.cli.cleanUp()
            other.cli.cleanUp()
        }
        let list = try ada.cli.write("# only Other\n\(other.did)\n", to: "allow.txt")
        let (_, port) = try lab.listen(home: ada.home, ["--accept", "allowlist:\(list)", "--no-discovery"], log: log("ada"))
        let r = try lab.nearcard(["exchange", "127.0.0.1:\(port)", "--yes"], home: grace.home)
        #expect(r.code == 7, "declined has its own exit code")
        // Said once; why (an allowlist) stays with the listener (PROTOCOL §8).
        #expect(r.stderr == "nearcard: the peer declined; nothing was stored\n", "\(r.stderr)")
        #expect(try grace.contacts().isEmpty && ada.contacts().isEmpty)
        // The one on the list is accepted, by address (no multicast involved).
        #expect(try lab.nearcard(["exchange", "127.0.0.1:\(port)", "--yes"], home: other.home).code == 0)
    }

    /// A running node sends the card and sharing choice as they are when each exchange happens: changed
    /// by `card set` and `share` (other processes) between two exchanges, the next peer gets the new ones
    /// (a running node reads them at most once a second: `NearcardDatabase.sharedCardTTL`).
    @Test func aCardChangedWhileListeningIsTheOneSent() throws {
        let lab = try Lab("cc")
        let ada = try TestPerson(name: "Ada", card: ["--title", "Programmer", "--company", "Analytical Engines"])
        let peers = try (1...3).map { try TestPerson(name: "Visitor \($0)") }
        defer {
            ada.cli.cleanUp()
            for p in peers { p.cli.cleanUp() }
        }
        try ada.cli.run(["share", "--fields", "name,title"])
        let (_, port) = try lab.listen(home: ada.home, ["--accept", "all", "--no-discovery"], log: log("ada"))
        func exchange(_ peer: TestPerson) throws -> JSONValue? {
            let r = try lab.nearcard(["exchange", "127.0.0.1:\(port)", "--yes"], home: peer.home)
            #expect(r.code == 0, "\(r.stderr)")
            return try peer.contacts().first
        }
        let first = try exchange(peers[0])
        #expect(first?["title"] == "Programmer" && first?["company"] == .null)
        #expect(try ada.cli.run(["card", "set", "--title", "Countess"]).code == 0)
        Thread.sleep(forTimeInterval: NearcardDatabase.sharedCardTTL)
        let second = try exchange(peers[1])
        #expect(second?["title"] == "Countess", "the card set while the node ran")
        #expect(try ada.cli.run(["share", "--fields", "name,company"]).code == 0)
        Thread.sleep(forTimeInterval: NearcardDatabase.sharedCardTTL)
        let third = try exchange(peers[2])
        #expect(third?["company"] == "Analytical Engines" && third?["title"] == .null, "the sharing choice made while the node ran")
    }

    /// A card carrying a group proof copied from someone else (its message and scope are not bound to the
    /// sender's DID): the exchange completes, but the receiver stores the contact as failed and says why;
    /// the sender's view of the receiver (no proof) stays verified.
    @Test func aCopiedGroupProofMarksTheContactFailed() throws {
        let lab = try Lab("gp")
        let ada = try TestPerson(name: "Ada", card: ["--company", "Analytical Engines"])
        let grace = try TestPerson(name: "Grace")
        defer {
            ada.cli.cleanUp()
            grace.cli.cleanUp()
        }
        let vector = try JSONParser.parse(
            String(
                contentsOf: CLI.packageRoot.appendingPathComponent("Tests/Vectors/semaphore/v4-depth10-proof.json"),
                encoding: .utf8))["semaphore_proof"]!
        // Put it on Ada's card behind `card set`'s back, as a modified client would.
        let sql = "INSERT INTO setting (key, value) VALUES ('card.issuerProof', '\(vector.canonicalText)')"
        #expect(try CLI.run(executable: "/usr/bin/sqlite3", [ada.home.appendingPathComponent("nearcard.sqlite").path, sql]).code == 0)
        #expect(try grace.cli.run(["group", "trust", vector["merkle_tree_root"]!.stringValue!, "--name", "Attendees"]).code == 0)
        let (_, port) = try lab.listen(home: ada.home, ["--accept", "all", "--no-discovery"], log: log("ada"))
        let r = try lab.nearcard(["exchange", "127.0.0.1:\(port)", "--yes"], home: grace.home)
        #expect(r.code == 0, "\(r.stderr)")
        #expect(r.stdout.contains("(failed)") && r.stdout.contains("not bound to \(ada.did)"), "\(r.stdout)")
        let atGrace = try #require(grace.contacts().first)
        #expect(atGrace["verificationStatus"] == "failed" && atGrace["memberOf"] == .null)
        #expect(atGrace["groupVerdict"]?.stringValue?.contains("not bound to \(ada.did)") == true, "the verdict is kept with the contact")
        var atAda: JSONValue?
        for _ in 0..<50 where atAda == nil {
            atAda = try ada.contacts().first
            if atAda == nil { usleep(100_000) }
        }
        #expect(atAda?["verificationStatus"] == "verified")
    }

    /// A listener without a terminal and without a policy declines, and says why.
    @Test func noTerminalNoPolicyDeclines() throws {
        let lab = try Lab("nt")
        let ada = try TestPerson(name: "Ada")
        let grace = try TestPerson(name: "Grace")
        defer {
            ada.cli.cleanUp()
            grace.cli.cleanUp()
        }
        let logURL = log("ada")
        let (_, port) = try lab.listen(home: ada.home, ["--no-discovery"], log: logURL)
        let r = try lab.nearcard(["exchange", "127.0.0.1:\(port)", "--yes"], home: grace.home)
        #expect(r.code == 7, "no decision is a decline, not a failed check")
        // That no one is there to ask stays with the listener: the dialer reads a plain refusal (PROTOCOL §8).
        #expect(r.stderr == "nearcard: the peer declined; nothing was stored\n", "\(r.stderr)")
        #expect(try String(contentsOf: logURL, encoding: .utf8).contains("every request will be declined"))
    }

    func interactive(_ mode: String) throws -> JSONValue {
        let lab = try Lab("ix")
        let ada = try TestPerson(name: "Ada")
        let grace = try TestPerson(name: "Grace")
        defer {
            ada.cli.cleanUp()
            grace.cli.cleanUp()
        }
        let script = CLI.packageRoot.appendingPathComponent("Tests/Interop/interactive_exchange.py").path
        let r = try CLI.run(
            executable: CLI.python,
            [
                script, lab.execPrefix.joined(separator: " "),
                CLI.executable.path, ada.home.path, grace.home.path, mode,
            ])
        #expect(r.code == 0, "driver failed: \(r.stderr)")
        var out = r.json.objectValue ?? [:]
        out["adaContacts"] = .array(try ada.contacts())
        out["graceContacts"] = .array(try grace.contacts())
        return .object(out)
    }

    /// Both screens show the same check code; both people say yes and type a message.
    @Test func interactiveConsentShowsTheSameCodeOnBothScreens() throws {
        let out = try interactive("accept")
        #expect(out["listenerCode"] != nil && out["listenerCode"] == out["dialerCode"])
        #expect(out["dialerExit"] == 0)
        // The dialling person is asked about the person who answered, not about a request they made.
        let asked = out["dialerAsked"]?.stringValue ?? ""
        #expect(asked.contains("Ada answered at ") && asked.contains("Do the codes match? Exchange cards with them?"), "\(asked)")
        #expect(!asked.contains("Exchange request from"), "\(asked)")
        #expect(out["listenerExit"] == 0, "Ctrl-C stops listen cleanly")
        #expect(out["graceContacts"]?.arrayValue?.first?["theirEphemeralMessage"] == "Hello from the listener")
        #expect(out["adaContacts"]?.arrayValue?.first?["theirEphemeralMessage"] == "Hello from the dialer")
    }

    /// Issue 52: two people whose terminals speak German (LANGUAGE=de) are asked, answer "j"/"ja" and
    /// are told the outcome in German; the check code stays in ASCII digits.
    @Test func theConsentPromptAndTheOutcomeSpeakGerman() throws {
        let out = try interactive("german")
        #expect(out["listenerCode"] != nil && out["listenerCode"] == out["dialerCode"], "the same ASCII code on both screens: \(out)")
        #expect(out["listenerStarted"]?.stringValue?.hasPrefix("Empfangsbereit auf Port") == true, "\(out)")
        let shown = out["listenerShown"]?.stringValue ?? ""
        #expect(shown.contains("Tauschanfrage von Grace unter 127.0.0.1:") && shown.contains("Fingerabdruck"), "\(shown)")
        let question = out["listenerAsked"]?.stringValue ?? ""
        #expect(
            question.contains("← muss mit dem Code auf dem anderen Bildschirm übereinstimmen") && question.contains("Annehmen und Karten tauschen?"),
            "\(question)")
        let asked = out["dialerAsked"]?.stringValue ?? ""
        #expect(asked.contains("Ada hat unter 127.0.0.1:") && asked.contains("Stimmen die Codes überein? Karten tauschen?"), "\(asked)")
        #expect(out["dialerExit"] == 0, "\(out)")
        #expect(out["dialerOutput"]?.stringValue?.contains("✔ Karten getauscht mit Ada — Kontakt ") == true, "\(out)")
        #expect(out["graceContacts"]?.arrayValue?.first?["theirEphemeralMessage"] == "Hallo vom Zuhörer")
        #expect(out["adaContacts"]?.arrayValue?.count == 1)
    }

    /// The person at the listener reads the code and says no (as they would if it did not match):
    /// the dialer is told it was declined; nobody stores anything.
    @Test func declinedAfterReadingTheCode() throws {
        let out = try interactive("decline")
        #expect(out["dialerExit"] == 7, "declined has its own exit code")
        #expect(out["dialerOutput"]?.stringValue?.contains("declined") == true)
        #expect(out["adaContacts"]?.arrayValue?.isEmpty == true && out["graceContacts"]?.arrayValue?.isEmpty == true)
    }

    /// Issue 51, point 7: the dialling person presses Ctrl-C while the other is deciding. The dialer says
    /// what happened on its side and what the other sees (not only "^C"), exits 130; the listener reports
    /// the ended connection; nobody stores anything.
    @Test func ctrlCWhileDiallingSaysWhatHappened() throws {
        let out = try interactive("interrupt")
        #expect(out["dialerExit"] == 130, "\(out)")
        let said = out["dialerOutput"]?.stringValue ?? ""
        #expect(
            said.contains("stopped before the cards crossed: nothing was stored; the node at 127.0.0.1:")
                && said.contains("sees the connection end and stores nothing"), "\(said)")
        #expect(out["listenerFailure"]?.stringValue?.contains("connection") == true, "\(out)")
        #expect(out["adaContacts"]?.arrayValue?.isEmpty == true && out["graceContacts"]?.arrayValue?.isEmpty == true)
    }

    /// The dialer vanishes while the listener's prompt is open: the listener reports the lost
    /// connection, stores nothing from it, and still completes the next exchange.
    @Test func peerVanishingMidExchange() throws {
        let out = try interactive("vanish")
        #expect(out["listenerFailure"]?.stringValue?.contains("connection") == true)
        #expect(out["dialerExit"] == 0)
        #expect(out["adaContacts"]?.arrayValue?.count == 1, "only the second exchange")
    }
}
