import Foundation
import NearcardCrypto
import NearcardProcess
import NearcardSimulation
import NearcardTestSupport
import Testing

/// Contacts in the person's CardDAV address book (docs/ADDRESSBOOK.md), against two real servers:
/// Radicale (htpasswd) and Xandikos (behind a TLS and Basic-auth proxy), each started per test on the
/// namespace's loopback with TLS from a throw-away CA in the system's trust store
/// (Tests/Interop/carddav_lab.py). The nodes run as the unprivileged test account; Python's vobject
/// reads back what Nearcard wrote.
@Suite(.serialized) struct AddressBookTests {
    let script = CLI.packageRoot.appendingPathComponent("Tests/Interop/carddav_lab.py").path
    func log(_ name: String) -> URL { FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-\(UUID().uuidString)-\(name).log") }

    /// One CardDAV server in a lab's namespace.
    struct Server {
        let info: JSONValue
        var url: String { info["url"]?.stringValue ?? "" }
        var book: String { info["addressbook"]?.stringValue ?? "" }
        var passwordFile: String { info["password_file"]?.stringValue ?? "" }
        var port: Int { Int(info["port"]?.integerValue ?? 0) }
        var pid: Int { Int(info["pid"]?.integerValue ?? 0) }
    }

    func start(_ kind: String, in lab: Lab, dir: String, _ options: [String] = []) throws -> Server {
        let out = log("carddav-\(kind)")
        _ = try lab.spawn([CLI.python, script, "serve", "--server", kind, "--dir", dir] + options, log: out)
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let text = (try? String(contentsOf: out, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("{\"url\"") }) { return Server(info: try JSONParser.parse(String(line))) }
            if text.contains("error:") { throw LabError("the \(kind) lab failed: \(text)") }
            usleep(100_000)
        }
        throw LabError("the \(kind) lab did not start: \((try? String(contentsOf: out, encoding: .utf8)) ?? "")")
    }

    /// Stops a server and takes its CA out of the trust store (waits for it).
    func stop(_ server: Server, in lab: Lab) throws {
        try lab.run([CLI.python, script, "stop", "--pid", String(server.pid)])
    }

    /// The cards on the server, as vobject parsed them.
    func cards(_ server: Server, in lab: Lab) throws -> [JSONValue] {
        let r = try lab.run([CLI.python, script, "list", "--url", server.book, "--user", "alice", "--password-file", server.passwordFile])
        guard r.code == 0, let list = r.json.arrayValue else { throw LabError("list failed (exit \(r.code)): \(r.stderr)") }
        return list
    }

    func card(of did: String, _ server: Server, in lab: Lab, within seconds: TimeInterval) throws -> JSONValue? {
        let deadline = Date().addingTimeInterval(seconds)
        repeat {
            if let c = try cards(server, in: lab).first(where: { $0["did"]?.stringValue == did }) { return c }
            usleep(250_000)
        } while Date() < deadline
        return nil
    }

    /// The whole walk of issue 39's "done when", for one server.
    @Test(.timeLimit(.minutes(4)), arguments: ["radicale", "xandikos"])
    func contactsReachTheAddressBookAndComeBackEdited(_ kind: String) throws {
        let (a, b) = try Lab.pair()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-carddav-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var server = try start(kind, in: a, dir: dir)
        defer { try? stop(server, in: a) }

        let ada = try TestPerson(name: "Ada Lovelace")
        defer { ada.cli.cleanUp() }
        let bob = try TestPerson(name: "Bob Builder", card: ["--email", "bob@example.org", "--title", "Engineer"])
        defer { bob.cli.cleanUp() }
        #expect(try bob.cli.run(["share", "--fields", "name,email,title"]).code == 0)

        // Added from the server's root: discovery finds the address book, through the system's trust store.
        let add = try a.nearcard(["addressbook", "add", server.url, "--user", "alice", "--password-file", server.passwordFile, "--json"], home: ada.home)
        try #require(add.code == 0, "addressbook add: \(add.stderr)")
        #expect(add.json["url"]?.stringValue == server.book)
        // doctor checks the account: certificate trusted, password accepted, writable.
        let doctor = try a.nearcard(["doctor", "--json"], home: ada.home)
        let check = doctor.json["checks"]?.arrayValue?.first { $0["check"] == "addressbook" }
        #expect(check?["status"] == "ok" && check?["message"]?.stringValue?.contains("writable") == true, "\(doctor.stdout)")

        let (_, port) = try a.listen(home: ada.home, ["--accept", "all"], log: log("ada"))
        let exchange = try b.nearcard(["exchange", "10.77.0.1:\(port)", "--yes", "--json"], home: bob.home)
        try #require(exchange.code == 0, "exchange: \(exchange.stderr)")
        let exchanged = Date()

        // Within 5 s of the exchange, Ada's running node has written Bob's card, and only what Bob disclosed.
        let written = try #require(try card(of: bob.did, server, in: a, within: 5), "Bob's card is not on \(kind) 5 s after the exchange")
        #expect(Date().timeIntervalSince(exchanged) <= 5.5)
        #expect(written["version"] == "4.0")
        #expect(written["fn"] == "Bob Builder")
        #expect(written["n"] == ["family": "Builder", "given": "Bob"], "N, which address books sort by (vobject reads it)")
        #expect(written["email"] == "bob@example.org")
        #expect(written["title"] == "Engineer")
        #expect(written["verification"] == "verified")
        #expect(written["note"] == .null)
        let properties = Set(written["properties"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        #expect(
            properties.isSubset(of: ["VERSION", "UID", "PRODID", "FN", "N", "EMAIL", "TITLE", "X-NEARCARD-DID", "X-NEARCARD-VERIFICATION"]),
            "unexpected properties: \(properties)")
        let uid = try #require(written["uid"]?.stringValue)

        // A note added on the server shows in `contacts show` after a sync, and is kept there.
        let note = try a.run([
            CLI.python, script, "set-note", "--url", server.book, "--user", "alice", "--password-file", server.passwordFile, "--uid", uid, "--note",
            "Met at the loom fair; owes me a coffee",
        ])
        try #require(note.code == 0, "set-note: \(note.stderr)")
        let sync = try a.nearcard(["addressbook", "sync"], home: ada.home)
        #expect(sync.code == 0, "sync: \(sync.stderr)")
        #expect(sync.stdout.contains("1 edited in the address book"), "\(sync.stdout)")
        let show = try a.nearcard(["contacts", "show", "Bob Builder"], home: ada.home)
        #expect(show.stdout.contains("Met at the loom fair; owes me a coffee"), "\(show.stdout)")
        let shown = try a.nearcard(["contacts", "show", "Bob Builder", "--json"], home: ada.home)
        #expect(shown.json["addressBooks"]?.arrayValue?.first?["note"] == "Met at the loom fair; owes me a coffee")

        // Bob's card changes and he exchanges again: the new title reaches the server in his card, the
        // note Ada wrote there stays, and the server's own spelling of the card is no edit (no conflict).
        #expect(try bob.cli.run(["card", "set", "--name", "Bob Builder", "--email", "bob@example.org", "--title", "Chief Engineer"]).code == 0)
        #expect(try b.nearcard(["exchange", "10.77.0.1:\(port)", "--yes"], home: bob.home).code == 0)
        // Two exchanges, by one node: the count, without an unexplained machine name (issue 51, point 10).
        let twice = try a.nearcard(["contacts", "show", "Bob Builder"], home: ada.home)
        let exchangesRow = twice.stdout.split(whereSeparator: \.isNewline).first { $0.hasPrefix("Exchanges") }.map(String.init) ?? ""
        #expect(exchangesRow.hasSuffix(" 2") && !exchangesRow.contains("(with"), "\(twice.stdout)")
        let resync = try a.nearcard(["addressbook", "sync"], home: ada.home)
        #expect(!resync.stdout.contains("changed on both sides"), "\(resync.stdout)")
        var updated: JSONValue?
        for _ in 0..<40 where updated?["title"] != "Chief Engineer" {
            updated = try cards(server, in: a).first { $0["did"]?.stringValue == bob.did }
            if updated?["title"] != "Chief Engineer" { usleep(250_000) }
        }
        #expect(updated?["title"] == "Chief Engineer", "\(updated ?? .null)")
        #expect(updated?["note"] == "Met at the loom fair; owes me a coffee", "\(updated ?? .null)")

        // Issue 51, point 5: Ada changes Bob's email in her address book while Bob's new card changes it
        // too. Ada's running node meets the conflict in its own sync; her next `addressbook sync` says it
        // (once), `status --json` lists it, and the address book's edit is what stays there.
        let edited = try a.run([
            CLI.python, script, "set-note", "--url", server.book, "--user", "alice", "--password-file", server.passwordFile, "--uid", uid, "--email",
            "bob@home.example",
        ])
        try #require(edited.code == 0, "set-note --email: \(edited.stderr)")
        #expect(try bob.cli.run(["card", "set", "--name", "Bob Builder", "--email", "bob@builder.example", "--title", "Chief Engineer"]).code == 0)
        #expect(try b.nearcard(["exchange", "10.77.0.1:\(port)", "--yes"], home: bob.home).code == 0)
        var conflicted = false
        for _ in 0..<40 where !conflicted {
            let status = try a.nearcard(["addressbook", "status", "--json"], home: ada.home)
            conflicted = status.json.arrayValue?.first?["notices"]?.arrayValue?.contains { $0["kind"] == "conflict" } == true
            if !conflicted { usleep(250_000) }
        }
        #expect(conflicted, "the running node's sync did not record the conflict")
        // Ada's next exchange (with Eve, through Ada's running node) says it; the sync after does not again.
        let eve = try TestPerson(name: "Eve Example")
        defer { eve.cli.cleanUp() }
        let (_, evePort) = try b.listen(home: eve.home, ["--accept", "all", "--no-discovery"], log: log("eve"))
        let told = try a.nearcard(["exchange", "10.77.0.2:\(evePort)", "--yes"], home: ada.home)
        #expect(told.code == 0, "\(told.stderr)")
        #expect(
            told.stdout.contains("Address book: changed on both sides, the address book's edit kept: Bob Builder (EMAIL)"), "\(told.stdout)")
        let again = try a.nearcard(["addressbook", "sync"], home: ada.home)
        #expect(!again.stdout.contains("changed on both sides"), "said once: \(again.stdout)")
        #expect(try card(of: bob.did, server, in: a, within: 1)?["email"] == "bob@home.example", "the address book's edit stays")

        // Deleted in Nearcard: gone on the server after the next sync (the running node's, here).
        #expect(try a.nearcard(["contacts", "delete", "Bob Builder", "--yes"], home: ada.home).code == 0)
        let deadline = Date().addingTimeInterval(10)
        var gone = false
        while !gone && Date() < deadline {
            gone = try cards(server, in: a).allSatisfy { $0["did"]?.stringValue != bob.did }
            if !gone { usleep(250_000) }
        }
        #expect(gone, "Bob's card is still on \(kind) after he was deleted in Nearcard")

        // The server down: an exchange still completes, the contact waits, and arrives once it is back.
        let serverPort = server.port
        try stop(server, in: a)
        let carol = try TestPerson(name: "Carol Cable")
        defer { carol.cli.cleanUp() }
        #expect(try b.nearcard(["exchange", "10.77.0.1:\(port)", "--yes"], home: carol.home).code == 0)
        usleep(3_000_000)
        let status = try a.nearcard(["addressbook", "status", "--json"], home: ada.home)
        let account = try #require(status.json.arrayValue?.first)
        #expect(account["toWrite"]?.integerValue == 1, "\(status.stdout)")
        #expect(account["lastError"]?.stringValue?.contains(server.book) == true, "\(status.stdout)")
        server = try start(kind, in: a, dir: dir, ["--port", String(serverPort)])
        #expect(try card(of: carol.did, server, in: a, within: 40) != nil, "Carol's card did not arrive once \(kind) was back")
        let after = try a.nearcard(["addressbook", "status", "--json"], home: ada.home)
        #expect(after.json.arrayValue?.first?["toWrite"]?.integerValue == 0)
        #expect(after.json.arrayValue?.first?["lastError"] == .null)

        // A card deleted in the address book is not deleted here, and not written again, unless asked.
        let carolsCard = try #require(try card(of: carol.did, server, in: a, within: 1))
        let removed = try a.run([
            CLI.python, script, "delete", "--url", server.book, "--user", "alice", "--password-file", server.passwordFile, "--uid",
            carolsCard["uid"]?.stringValue ?? "",
        ])
        try #require(removed.code == 0, "delete: \(removed.stderr)")
        let kept = try a.nearcard(["addressbook", "sync"], home: ada.home)
        #expect(kept.stdout.contains("deleted in the address book, kept here: Carol Cable"), "\(kept.stdout)")
        let keptAgain = try a.nearcard(["addressbook", "sync"], home: ada.home)
        #expect(!keptAgain.stdout.contains("kept here: Carol Cable"), "said once (issue 51, point 10): \(keptAgain.stdout)")
        #expect(try ada.contacts().contains { $0["didPublicKey"]?.stringValue == carol.did })
        #expect(try card(of: carol.did, server, in: a, within: 0) == nil)
        let mirrored = try a.nearcard(["addressbook", "sync", "--mirror-deletes"], home: ada.home)
        #expect(mirrored.stdout.contains("deleted here as in the address book: Carol Cable"), "\(mirrored.stdout)")
        #expect(try !ada.contacts().contains { $0["didPublicKey"]?.stringValue == carol.did })

        // Each failure is one line naming the account and what to do.
        let wrong = try ada.cli.write("not the password", to: "wrong-password")
        let refused = try a.nearcard(["addressbook", "add", server.book, "--user", "alice", "--password-file", wrong], home: ada.home)
        #expect(refused.code == 1)
        #expect(refused.stderr.contains(server.book) && refused.stderr.contains("401") && refused.stderr.contains("password"), "\(refused.stderr)")
        #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        try stop(server, in: a)

        let expired = try start(kind, in: a, dir: dir + "-expired", ["--expired-cert"])
        defer {
            try? stop(expired, in: a)
            try? FileManager.default.removeItem(atPath: dir + "-expired")
        }
        let untrusted = try a.nearcard(["addressbook", "add", expired.book, "--user", "alice", "--password-file", expired.passwordFile], home: ada.home)
        #expect(untrusted.code == 1)
        #expect(untrusted.stderr.contains(expired.book) && untrusted.stderr.contains("certificate"), "\(untrusted.stderr)")
        #expect(untrusted.stderr.contains("expired on") && untrusted.stderr.contains("renew it on the server"), "\(untrusted.stderr)")
        #expect(untrusted.stderr.split(separator: "\n").count == 1, "\(untrusted.stderr)")
        try stop(expired, in: a)

        // A certificate for another name says so (read from the TLS library's error type), and exits 1.
        let misnamed = try start(kind, in: a, dir: dir + "-name", ["--cert-name", "elsewhere.invalid"])
        defer {
            try? stop(misnamed, in: a)
            try? FileManager.default.removeItem(atPath: dir + "-name")
        }
        let other = try a.nearcard(["addressbook", "add", misnamed.book, "--user", "alice", "--password-file", misnamed.passwordFile], home: ada.home)
        #expect(other.code == 1 && other.stderr.contains("was issued for another name"), "\(other.code): \(other.stderr)")
        try stop(misnamed, in: a)

        let readOnly = try start(kind, in: a, dir: dir + "-ro", ["--read-only"])
        defer {
            try? stop(readOnly, in: a)
            try? FileManager.default.removeItem(atPath: dir + "-ro")
        }
        // Radicale says so when asked for the privileges (add refuses); Xandikos's proxy refuses the first write (add's
        // sync, which has Dan's card to write).
        let dan = try TestPerson(name: "Dan Dial")
        defer { dan.cli.cleanUp() }
        #expect(try b.nearcard(["exchange", "10.77.0.1:\(port)", "--yes"], home: dan.home).code == 0)
        let denied = try a.nearcard(["addressbook", "add", readOnly.book, "--user", "alice", "--password-file", readOnly.passwordFile], home: ada.home)
        #expect(denied.code == 1)
        #expect(denied.stderr.contains(readOnly.book) && denied.stderr.contains("write access"), "\(denied.stderr)")
        #expect(denied.stderr.split(separator: "\n").count == 1, "\(denied.stderr)")
    }

    /// One address book under two names (issue 51, point 1): `https://localhost:P/` then
    /// `https://127.0.0.1:P/` reach the same collection. The second is refused, naming the first; and
    /// added again under the new name after the old is removed, it holds each card once (the card's UID
    /// is the contact's, not the account's).
    @Test(.timeLimit(.minutes(3)), arguments: ["radicale", "xandikos"])
    func oneAddressBookUnderTwoNamesHoldsEachCardOnce(_ kind: String) throws {
        let (a, b) = try Lab.pair()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-carddav-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try start(kind, in: a, dir: dir)
        defer { try? stop(server, in: a) }
        let ada = try TestPerson(name: "Ada Lovelace")
        let bob = try TestPerson(name: "Bob Builder")
        defer {
            ada.cli.cleanUp()
            bob.cli.cleanUp()
        }
        let (_, bobPort) = try b.listen(home: bob.home, ["--accept", "all", "--no-discovery"], log: log("bob"))
        #expect(try a.nearcard(["exchange", "10.77.0.2:\(bobPort)", "--yes"], home: ada.home).code == 0)
        let first = try a.nearcard(["addressbook", "add", server.url, "--user", "alice", "--password-file", server.passwordFile], home: ada.home)
        try #require(first.code == 0, "addressbook add: \(first.stderr)")
        #expect(try cards(server, in: a).filter { $0["did"]?.stringValue == bob.did }.count == 1)

        let otherName = server.url.replacingOccurrences(of: "//localhost:", with: "//127.0.0.1:")
        let second = try a.nearcard(["addressbook", "add", otherName, "--user", "alice", "--password-file", server.passwordFile], home: ada.home)
        #expect(second.code == 2, "the same book under another name was added: \(second.stdout)")
        #expect(second.stderr.contains("already added as \(server.book)"), "\(second.stderr)")
        #expect(second.stderr.split(separator: "\n").count == 1, "\(second.stderr)")
        let status = try a.nearcard(["addressbook", "status", "--json"], home: ada.home)
        #expect(status.json.arrayValue?.count == 1, "\(status.stdout)")

        // The host renamed: the old account removed, the new name added; the card is the same card.
        #expect(try a.nearcard(["addressbook", "remove", server.book], home: ada.home).code == 0)
        let renamed = try a.nearcard(["addressbook", "add", otherName, "--user", "alice", "--password-file", server.passwordFile], home: ada.home)
        try #require(renamed.code == 0, "addressbook add: \(renamed.stderr)")
        #expect(try a.nearcard(["addressbook", "sync"], home: ada.home).code == 0)
        let bobs = try cards(server, in: a).filter { $0["did"]?.stringValue == bob.did }
        #expect(bobs.count == 1, "Bob's card is on \(kind) \(bobs.count) times: \(bobs)")
    }

    /// Issue 51, point 10: two address books on one host (two servers on localhost) are told apart in
    /// `contacts show`, by port and path, not both "(address book localhost)".
    @Test(.timeLimit(.minutes(3))) func twoAddressBooksOnOneHostAreToldApart() throws {
        let (a, b) = try Lab.pair()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-carddav-\(UUID().uuidString)").path
        defer {
            try? FileManager.default.removeItem(atPath: dir + "-1")
            try? FileManager.default.removeItem(atPath: dir + "-2")
        }
        let one = try start("radicale", in: a, dir: dir + "-1")
        defer { try? stop(one, in: a) }
        let two = try start("radicale", in: a, dir: dir + "-2")
        defer { try? stop(two, in: a) }
        let ada = try TestPerson(name: "Ada Lovelace")
        let bob = try TestPerson(name: "Bob Builder")
        defer {
            ada.cli.cleanUp()
            bob.cli.cleanUp()
        }
        let (_, bobPort) = try b.listen(home: bob.home, ["--accept", "all", "--no-discovery"], log: log("bob"))
        #expect(try a.nearcard(["exchange", "10.77.0.2:\(bobPort)", "--yes"], home: ada.home).code == 0)
        for (server, note) in [(one, "note in the first"), (two, "note in the second")] {
            let add = try a.nearcard(["addressbook", "add", server.url, "--user", "alice", "--password-file", server.passwordFile], home: ada.home)
            try #require(add.code == 0, "\(add.stderr)")
            let uid = try #require(try card(of: bob.did, server, in: a, within: 5)?["uid"]?.stringValue)
            let set = try a.run([
                CLI.python, script, "set-note", "--url", server.book, "--user", "alice", "--password-file", server.passwordFile, "--uid", uid,
                "--note", note,
            ])
            try #require(set.code == 0, "\(set.stderr)")
        }
        #expect(try a.nearcard(["addressbook", "sync"], home: ada.home).code == 0)
        let shown = try a.nearcard(["contacts", "show", "Bob Builder"], home: ada.home).stdout
        for (server, note) in [(one, "note in the first"), (two, "note in the second")] {
            #expect(shown.contains("\(note)  (address book localhost:\(server.port)/alice/contacts)"), "\(shown)")
        }
    }

    /// The web app's "Address book": added from the page (the password typed there kept in a 0600 file,
    /// never shown back), the contact already in the book written at once, "Sync now" answering.
    @Test(.timeLimit(.minutes(3))) func theWebAppAddsAnAddressBookAndSyncs() throws {
        let (a, b) = try Lab.pair()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-carddav-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try start("radicale", in: a, dir: dir)
        defer { try? stop(server, in: a) }
        let ada = try TestPerson(name: "Ada Lovelace")
        let bob = try TestPerson(name: "Bob Builder")
        defer {
            ada.cli.cleanUp()
            bob.cli.cleanUp()
        }
        let (_, bobPort) = try b.listen(home: bob.home, ["--accept", "all", "--no-discovery"], log: log("bob"))
        #expect(try a.nearcard(["exchange", "10.77.0.2:\(bobPort)", "--yes"], home: ada.home).code == 0)

        let address = try a.ui(home: ada.home, port: 7448, log: log("ada-ui"))
        let driver = CLI.packageRoot.appendingPathComponent("Tests/Interop/addressbook_ui.py").path
        let r = try a.run([CLI.python, driver, "--page", address, "--server", server.url, "--user", "alice", "--password-file", server.passwordFile])
        #expect(r.code == 0, "\(r.stdout) \(r.stderr.suffix(2000))")
        let report = r.json
        // Issue 51, point 3: a wrong password is said beside the form, in its terms, on its field.
        let wrong = report["wrongPassword"]?.stringValue ?? ""
        #expect(wrong.contains("refused this user name and password") && !wrong.contains("nearcard") && !wrong.contains("--password"), "\(wrong)")
        #expect(report["wrongPasswordInForm"] == true && report["wrongPasswordMarked"] == "true" && report["focused"] == "ab-password", "\(report)")
        #expect(report["noticeAfterWrong"] == "", "not at the top of the page: \(report)")
        #expect(report["errorCleared"] == true)
        // Point 6: at 360 px the account's row fits.
        #expect(report["fitsAt360"] == true, "\(report)")
        #expect(report["axe360"]?.arrayValue?.isEmpty == true, "\(report["axe360"] ?? .null)")
        #expect(report["added"]?.stringValue?.contains("1 added") == true, "\(report)")
        #expect(report["listed"]?.stringValue?.contains(server.book) == true, "\(report)")
        #expect(report["synced"]?.stringValue?.contains("nothing to change") == true, "\(report)")
        #expect(report["passwordField"] == "", "the password field is cleared once added")
        #expect(report["passwordOnPage"] == false && report["passwordInAPI"] == false)
        #expect(report["axe"]?.arrayValue?.isEmpty == true, "\(report["axe"] ?? .null)")
        #expect(try card(of: bob.did, server, in: a, within: 2) != nil, "Bob's card is not on the server")
        // The password the page was given is a 0600 file in the home; the book names only its path.
        let status = try ada.cli.run(["addressbook", "status", "--json"])
        let source = status.json.arrayValue?.first?["password"]?.stringValue ?? ""
        #expect(source.hasPrefix("file \(ada.home.path)/addressbook-"), "\(status.stdout)")
        #expect(fileMode(String(source.dropFirst(5))) == 0o600)

        // Point 5 on the page: Ada edits Bob's email in the address book while Bob's new card changes it
        // too; the account's row says it, and the page says it at the top when opened.
        let bobsCard = try #require(try card(of: bob.did, server, in: a, within: 1))
        let edited = try a.run([
            CLI.python, script, "set-note", "--url", server.book, "--user", "alice", "--password-file", server.passwordFile, "--uid",
            bobsCard["uid"]?.stringValue ?? "", "--email", "bob@home.example",
        ])
        try #require(edited.code == 0, "set-note --email: \(edited.stderr)")
        #expect(try bob.cli.run(["card", "set", "--name", "Bob Builder", "--email", "bob@builder.example"]).code == 0)
        #expect(try bob.cli.run(["share", "--fields", "name,email"]).code == 0)
        #expect(try a.nearcard(["exchange", "10.77.0.2:\(bobPort)", "--yes"], home: ada.home).code == 0)
        let conflict = try a.run([CLI.python, driver, "--page", address, "--sync-and-read", "changed on both sides"])
        #expect(conflict.code == 0, "\(conflict.stdout) \(conflict.stderr.suffix(1000))")
        #expect(conflict.json["list"]?.stringValue?.contains("Bob Builder: changed there and by a newer card from them (EMAIL)") == true, "\(conflict.stdout)")
        #expect(conflict.json["notice"]?.stringValue?.contains("Changed on both sides in your address book: Bob Builder (EMAIL)") == true, "\(conflict.stdout)")

        // Point 6: Bob's card deleted on the server: after "Sync now" the list says so, not "in sync".
        let bobs = try #require(try card(of: bob.did, server, in: a, within: 1))
        let removed = try a.run([
            CLI.python, script, "delete", "--url", server.book, "--user", "alice", "--password-file", server.passwordFile, "--uid",
            bobs["uid"]?.stringValue ?? "",
        ])
        try #require(removed.code == 0, "delete: \(removed.stderr)")
        let read = try a.run([CLI.python, driver, "--page", address, "--sync-and-read", "deleted there"])
        #expect(read.code == 0, "\(read.stdout) \(read.stderr.suffix(1000))")
        let list = read.json["list"]?.stringValue ?? ""
        #expect(list.contains("1 deleted there") && list.contains("Bob Builder: deleted in this address book, kept here."), "\(list)")
    }

    /// `add --secret-service`: the password goes to the desktop's Secret Service (a real GNOME Keyring on
    /// the test account's own session bus), never to the book; sync reads it from there; `remove` takes it out.
    @Test(.timeLimit(.minutes(2))) func theSecretServiceKeepsThePassword() throws {
        let lab = try Lab("ss")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-carddav-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A password no file of the book could hold by chance.
        let server = try start("radicale", in: lab, dir: dir, ["--password", "pw-\(UUID().uuidString)"])
        defer { try? stop(server, in: lab) }
        let ada = try TestPerson(name: "Ada Lovelace")
        defer { ada.cli.cleanUp() }
        // The account's own session: a HOME for the keyring and a copy of the binary it may run.
        let session = ada.cli.auxiliary.appendingPathComponent("session").path
        try FileManager.default.createDirectory(atPath: session, withIntermediateDirectories: true)
        TestAccount.give(session)
        let binary = session + "/nearcard"
        // Copied by cp, not by this process: a file this process holds open for writing is inherited by
        // whatever another test spawns meanwhile, and exec then fails with "Text file busy".
        #expect(try CLI.run(executable: "/bin/cp", [CLI.builtExecutable.path, binary]).code == 0)
        chmod(binary, 0o755)
        let lookup = "secret-tool lookup application nearcard service carddav server \(server.url) user alice"
        let script = """
            printf keyring-unlock | gnome-keyring-daemon --unlock --components=secrets >/dev/null || exit 10
            \(binary) --home \(ada.home.path) addressbook add \(server.url) --user alice --secret-service < \(server.passwordFile) || exit 11
            \(binary) --home \(ada.home.path) addressbook sync || exit 12
            \(binary) --home \(ada.home.path) addressbook status --json > \(session)/status.json || exit 13
            \(lookup) > \(session)/kept || exit 14
            \(binary) --home \(ada.home.path) addressbook remove \(server.book) || exit 15
            \(lookup) > /dev/null 2>&1 && exit 16
            exit 0
            """
        let r = try lab.run([
            "/usr/sbin/runuser", "-u", TestAccount.name, "--", "/usr/bin/env", "HOME=\(session)", "dbus-run-session", "--", "/bin/sh", "-c", script,
        ])
        #expect(r.code == 0, "exit \(r.code): \(r.stdout) \(r.stderr.suffix(1500))")
        let password = try String(contentsOfFile: server.passwordFile, encoding: .utf8)
        #expect(try String(contentsOfFile: session + "/kept", encoding: .utf8) == password, "the keyring holds the password")
        let status = try JSONParser.parse(try String(contentsOfFile: session + "/status.json", encoding: .utf8))
        #expect(status.arrayValue?.first?["password"] == "the Secret Service", "\(status)")
        // Nothing of it in the book's files.
        for file in ["nearcard.sqlite", "nearcard.sqlite-wal"] {
            let bytes = (try? Data(contentsOf: ada.home.appendingPathComponent(file))) ?? Data()
            #expect(bytes.range(of: Data(password.utf8)) == nil, "the password is in \(file)")
        }
    }
}
