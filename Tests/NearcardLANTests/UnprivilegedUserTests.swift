import Foundation
import NearcardCrypto
import NearcardProcess
import NearcardSimulation
import NearcardTestSupport
import Testing

/// Everything a person does, done by an ordinary account (TestAccount): set up, listen with discovery
/// on the namespace's system avahi-daemon, find the peer, exchange by name, message, read the inbox,
/// make and scan a QR code, and meet a bot. Their files stay theirs (0700/0600): another account can
/// read none of them. When the tests run without root they are that ordinary user already.
@Suite(.serialized) struct UnprivilegedUserTests {
    func log(_ name: String) -> URL { FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-\(UUID().uuidString)-\(name).log") }

    @Test func aPersonsWholeDayWithoutRoot() throws {
        let lab = try Lab("up")
        let ada = try TestPerson(name: "Ada Lovelace", card: ["--email", "ada@example.org", "--company", "Analytical Engines"])
        let grace = try TestPerson(name: "Grace Hopper", card: ["--email", "grace@example.org", "--company", "US Navy"])
        defer {
            ada.cli.cleanUp()
            grace.cli.cleanUp()
        }
        try ada.cli.run(["share", "--fields", "name,email,company"])

        // Ada listens, published on the LAN; the node really runs as the ordinary account.
        let (adaNode, _) = try lab.listen(home: ada.home, ["--accept", "all", "--message", "Hello Grace"], log: log("ada"))
        let uid = try #require(TestAccount.uid(ofProcess: adaNode.pid))
        #expect(uid != 0, "the listening node runs as root")
        if TestAccount.isRoot { #expect(uid == TestAccount.ids(TestAccount.name)?.uid) }
        // It holds the keys, so it is not dumpable: the user's other processes cannot read its /proc files.
        let peek =
            TestAccount.isRoot
            ? try TestAccount.run(as: TestAccount.name, "/bin/cat", ["/proc/\(adaNode.pid)/environ"])
            : try CLI.run(executable: "/bin/cat", ["/proc/\(adaNode.pid)/environ"])
        #expect(peek.code != 0 && peek.stdout.isEmpty, "another process of the same user read the node's environment")
        // Its long-term keys are in memory locked in RAM (never swapped out): the process has locked pages.
        let status = try String(contentsOfFile: "/proc/\(adaNode.pid)/status", encoding: .utf8)
        let locked =
            status.split(separator: "\n").first { $0.hasPrefix("VmLck:") }
            .flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true)[1]) } ?? 0
        #expect(locked > 0, "the serving node locked no memory for its keys")

        // Grace finds her by name and exchanges; both contacts are verified.
        let peers = try lab.nearcard(["peers", "--json", "--timeout", "2"], home: grace.home)
        #expect(peers.code == 0 && peers.json.arrayValue?.contains { $0["name"] == "Ada Lovelace" } == true, "\(peers.stdout) \(peers.stderr)")
        let exchanged = try lab.nearcard(["exchange", "Ada Lovelace", "--yes", "--message", "Hi Ada", "--json"], home: grace.home)
        #expect(exchanged.code == 0, "exchange as an ordinary user: \(exchanged.stderr)")
        #expect(exchanged.json["verificationStatus"] == "verified" && exchanged.json["email"] == "ada@example.org")
        var atAda: JSONValue?
        for _ in 0..<50 where atAda == nil {
            atAda = try ada.contacts().first
            if atAda == nil { usleep(100_000) }
        }
        #expect(atAda?["name"] == "Grace Hopper" && atAda?["verificationStatus"] == "verified" && atAda?["theirEphemeralMessage"] == "Hi Ada")

        // A follow-up message, delivered to Ada's running node and read in her inbox.
        let sent = try lab.nearcard(["message", "Ada Lovelace", "Coffee at four?", "--json"], home: grace.home)
        #expect(sent.code == 0 && sent.json["state"] == "delivered", "\(sent.stdout) \(sent.stderr)")
        let inbox = try ada.cli.run(["inbox", "--json"]).list()
        #expect(inbox.first?["text"] == "Coffee at four?" && inbox.first?["contact"] == "Grace Hopper")

        // A QR code written to a file the person owns, and scanned back by another person.
        let png = grace.cli.auxiliary.appendingPathComponent("grace.png").path
        let made = try grace.cli.run(["qr", "make", "--format", "did-signed", "--out", png])
        #expect(made.code == 0 && FileManager.default.fileExists(atPath: png), "\(made.stderr)")
        let reader = try TestPerson(name: "Reader")
        defer { reader.cli.cleanUp() }
        let scanned = try reader.cli.run(["qr", "scan", "--image", png, "--json"])
        #expect(scanned.code == 0 && scanned.stdout.contains("Grace Hopper"), "\(scanned.stdout) \(scanned.stderr)")

        // A bot, run by the same kind of account, takes a visitor.
        let bot = try TestPerson(name: "Booth Bot")
        defer { bot.cli.cleanUp() }
        let policy = try bot.cli.write(#"{"version": 1, "accept": "everyone", "message": "Thanks, {name}!"}"#, to: "policy.json")
        let botLog = log("bot")
        let botNode = try lab.spawn([CLI.executable.path, "bot", "--policy", policy, "--home", bot.home.path, "--port", "0", "--no-discovery"], log: botLog)
        let botPort = try Lab.startedPort(in: botLog)
        #expect(TestAccount.uid(ofProcess: botNode.pid) != 0)
        let visit = try lab.nearcard(["exchange", "127.0.0.1:\(botPort)", "--yes", "--json"], home: grace.home)
        #expect(visit.code == 0 && visit.json["theirEphemeralMessage"] == "Thanks, Grace Hopper!", "\(visit.stderr)")

        // Every file is the person's alone.
        for person in [ada, grace] {
            let home = person.home.path
            #expect(fileMode(home) == 0o700, "home \(home)")
            #expect(fileMode(home + "/secret-keys.json") == 0o600)
            #expect(fileMode(home + "/nearcard.sqlite") & 0o077 == 0, "nearcard.sqlite is \(String(fileMode(home + "/nearcard.sqlite"), radix: 8))")
            if TestAccount.isRoot {
                for file in ["secret-keys.json", "nearcard.sqlite", "identity.json"] {
                    let r = try TestAccount.run(as: TestAccount.stranger, "/bin/cat", [home + "/" + file])
                    #expect(r.code != 0 && r.stdout.isEmpty, "another account read \(file)")
                }
            }
        }
    }

    /// A database its owner made read-only stays so: writing is refused, saying which file and what to
    /// do, and nothing changes; made writable again, it works (its WAL and SHM follow its mode). A file
    /// that is not a database keeps its mode. (As the tests' unprivileged account: root writes anything.)
    @Test func aReadOnlyDatabaseIsRefusedNotMadeWritable() throws {
        let ada = try TestPerson(name: "Ada Lovelace")
        defer { ada.cli.cleanUp() }
        try ada.cli.run(["contacts", "add", "--name", "Grace Hopper"])
        let database = ada.home.appendingPathComponent("nearcard.sqlite").path
        #expect(chmod(database, 0o400) == 0)
        if TestAccount.isRoot {
            let refused = try ada.cli.run(["contacts", "add", "--name", "Charles Babbage"])
            #expect(
                refused.code == 5 && refused.stderr.contains("not writable by this user (mode 400)") && refused.stderr.contains("chmod u+w \(database)"),
                "\(refused.stderr)")
            #expect(fileMode(database) == 0o400, "the owner's choice is kept")
        }
        #expect(chmod(database, 0o600) == 0)
        if TestAccount.isRoot {
            // Marked immutable (chattr +i): no chmod helps, and the fix says so — for an exchange as well.
            #expect(try CLI.run(executable: "/usr/bin/chattr", ["+i", database]).code == 0)
            defer { _ = try? CLI.run(executable: "/usr/bin/chattr", ["-i", database]) }
            for args in [["contacts", "add", "--name", "Charles Babbage"], ["exchange", "127.0.0.1:9", "--yes"]] {
                let refused = try ada.cli.run(args)
                #expect(
                    refused.code == 5 && refused.stderr.contains("is marked immutable") && refused.stderr.contains("chattr -i")
                        && !refused.stderr.contains("chmod"), "\(args): \(refused.stderr)")
            }
            #expect(try CLI.run(executable: "/usr/bin/chattr", ["-i", database]).code == 0)
        }
        #expect(try ada.cli.run(["contacts", "add", "--name", "Charles Babbage"]).code == 0)
        #expect(try ada.contacts().count == 2)
        let notes = ada.cli.auxiliary.appendingPathComponent("notes.txt").path
        try FileManager.default.createDirectory(atPath: ada.cli.auxiliary.path, withIntermediateDirectories: true)
        try "not a database\n".write(toFile: notes, atomically: true, encoding: .utf8)
        TestAccount.give(ada.cli.auxiliary.path)
        TestAccount.give(notes)
        #expect(chmod(notes, 0o644) == 0)
        let wrong = try ada.cli.run(["contacts", "--store", "sqlite:" + notes])
        #expect(wrong.code == 5 && wrong.stderr.contains("not a Nearcard database"), "\(wrong.stderr)")
        let kept = try String(contentsOfFile: notes, encoding: .utf8)
        #expect(fileMode(notes) == 0o644 && kept == "not a database\n")
    }

    /// A home made elsewhere with mode 0755 and files 0644 (an older Nearcard, a copy): the next command
    /// makes it private, says so once, and another account reads nothing. A passphrase file others can
    /// read is refused, as ssh refuses such a key.
    @Test func aHomeOthersCouldReadIsMadePrivate() throws {
        let ada = try TestPerson(name: "Ada Lovelace", card: ["--email", "ada@example.org"])
        defer { ada.cli.cleanUp() }
        let home = ada.home.path
        #expect(chmod(home, 0o755) == 0)
        // What an older Nearcard left: the database and its WAL/SHM made under umask 022.
        for file in try FileManager.default.contentsOfDirectory(atPath: home) where file.hasPrefix("nearcard.sqlite") { chmod(home + "/" + file, 0o644) }
        let listed = try ada.cli.run(["contacts"])
        #expect(listed.code == 0 && listed.stderr.contains("could be reached by other users") && listed.stderr.contains("0700 now"), "\(listed.stderr)")
        #expect(fileMode(home) == 0o700)
        for file in try FileManager.default.contentsOfDirectory(atPath: home) {
            #expect(fileMode(home + "/" + file) & 0o077 == 0, "\(file) is \(String(fileMode(home + "/" + file), radix: 8))")
            // (A key file others could read is refused where it is read, not fixed: IdentityCommandTests.)
            if TestAccount.isRoot {
                let r = try TestAccount.run(as: TestAccount.stranger, "/bin/cat", [home + "/" + file])
                #expect(r.code != 0 && r.stdout.isEmpty, "another account read \(file)")
            }
        }
        #expect(!(try ada.cli.run(["contacts"])).stderr.contains("0700 now"), "the notice is said once, when there was something to do")
        // A directory that is not a Nearcard home (a mistyped `--home ~`) is not locked down by a command
        // that only reads: it says there is no identity there, and the directory keeps its mode.
        let elsewhere = ada.cli.auxiliary.appendingPathComponent("documents").path
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try "notes\n".write(toFile: elsewhere + "/notes.txt", atomically: true, encoding: .utf8)
        TestAccount.give(ada.cli.auxiliary.path)
        TestAccount.give(elsewhere)
        #expect(chmod(elsewhere, 0o755) == 0)
        let notHome = try ada.cli.run(["contacts", "--home", elsewhere])
        #expect(notHome.code == 3 && notHome.stderr.contains("no identity yet") && !notHome.stderr.contains("0700"), "\(notHome.stderr)")
        #expect(fileMode(elsewhere) == 0o755)

        let newcomer = try CLI()
        defer { newcomer.cleanUp() }
        let secret = ada.cli.auxiliary.appendingPathComponent("passphrase.txt").path
        try FileManager.default.createDirectory(atPath: ada.cli.auxiliary.path, withIntermediateDirectories: true)
        try "correct horse battery staple\n".write(toFile: secret, atomically: true, encoding: .utf8)
        chmod(secret, 0o644)
        TestAccount.give(ada.cli.auxiliary.path)
        TestAccount.give(secret)
        let refused = try newcomer.run(["init", "--name", "Newcomer", "--passphrase-file", secret])
        #expect(refused.code == 3 && refused.stderr.contains("chmod 600"), "\(refused.stderr)")
        chmod(secret, 0o600)
        #expect(try newcomer.run(["init", "--name", "Newcomer", "--passphrase-file", secret]).code == 0)
    }
}
