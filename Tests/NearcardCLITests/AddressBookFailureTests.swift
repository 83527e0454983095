import Foundation
import NearcardCrypto
import NearcardProcess
import NearcardTestSupport
import Synchronization
import Testing

/// An address book's server that fails, fills up, or answers what no CardDAV server sends: each is one
/// line that says which, with exit 12 (never 4, which is avahi-daemon's and the port's, nor 8's "is the
/// server up?"), and "will retry" only where the account is kept (docs/ADDRESSBOOK.md, Errors).
@Suite(.serialized) struct AddressBookFailureTests {
    /// Tests/Interop/hostile_dav.py on 127.0.0.1 (http is allowed to this machine only).
    final class HostileServer: Sendable {
        let process: ChildProcess
        let port: Int

        init() throws {
            let script = CLI.packageRoot.appendingPathComponent("Tests/Interop/hostile_dav.py").path
            let log = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-dav-\(UUID().uuidString).log").path
            process = try ChildProcess([CLI.python, script], log: log, pipes: true)
            let first = Mutex<String?>(nil)
            let said = DispatchSemaphore(value: 0)
            process.readLines { line in
                if first.withLock({ f in
                    defer { f = f ?? line }
                    return f == nil
                }) {
                    said.signal()
                }
            }
            _ = said.wait(timeout: .now() + 15)
            guard let text = first.withLock({ $0 }), let port = Int(text.trimmingCharacters(in: .whitespaces)) else {
                _ = process.stop(after: 2)
                throw LabError("hostile_dav.py did not say its port")
            }
            self.port = port
        }

        func url(_ mode: String) -> String { "http://127.0.0.1:\(port)/\(mode)/book/" }
        func stop() { _ = process.stop(after: 3) }
    }

    /// A home with a contact from a scanned code, which an account added with `--include-qr` writes.
    func home() throws -> (CLI, String) {
        let cli = try CLI()
        #expect(try cli.run(["init", "--name", "Ada"]).code == 0)
        let peer = CLI.packageRoot.appendingPathComponent("Tests/Interop/qr_peer.py").path
        let text = try CLI.run(executable: CLI.python, [peer, "ios-plaintext"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let scanned = try cli.run(["qr", "scan", text])
        #expect(scanned.code == 0, "\(scanned.stderr)")
        return (cli, try cli.write("secret", to: "password"))
    }

    /// The password file the web app keeps for an account it added (`addressbook-<16 hex>.password` in
    /// the home) goes with the account when the CLI removes it too; a file the person gave stays.
    @Test func removingAnAccountRemovesThePasswordFileNearcardMadeForIt() throws {
        let server = try HostileServer()
        defer { server.stop() }
        let (cli, own) = try home()
        defer { cli.cleanUp() }
        let url = server.url("full")
        let name = "addressbook-" + Hex.encode(SHA256.hash(Array("\(url)\u{0}ada".utf8)).prefix(8).map { $0 }) + ".password"
        let made = cli.home.appendingPathComponent(name).path
        // Written as the web app writes it: in the home, 0600, the home's owner's (the tests' user).
        let owner = try FileManager.default.attributesOfItem(atPath: cli.home.path)[.ownerAccountID] as? Int ?? 0
        #expect(
            FileManager.default.createFile(
                atPath: made, contents: Data("secret".utf8), attributes: [.posixPermissions: 0o600, .ownerAccountID: owner]))
        let added = try cli.run(["addressbook", "add", url, "--user", "ada", "--password-file", made, "--no-sync"])
        #expect(added.code == 0, "\(added.stderr)")
        let removed = try cli.run(["addressbook", "remove", url])
        #expect(removed.code == 0, "\(removed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: made), "the password file made for the account is gone")
        // One the person gave is theirs.
        #expect(try cli.run(["addressbook", "add", url, "--user", "ada", "--password-file", own, "--no-sync"]).code == 0)
        #expect(try cli.run(["addressbook", "remove", url]).code == 0)
        #expect(FileManager.default.fileExists(atPath: own))
    }

    /// Issue 51, point 9: the doctor does not call an http:// address book's connection a trusted
    /// certificate. (No system bus for it: its network checks stay off this machine's interfaces.)
    @Test func theDoctorSaysPlainHttpIsNoCertificate() throws {
        let server = try HostileServer()
        defer { server.stop() }
        let (cli, password) = try home()
        defer { cli.cleanUp() }
        #expect(try cli.run(["addressbook", "add", server.url("full"), "--user", "ada", "--password-file", password, "--no-sync"]).code == 0)
        let doctor = try cli.run(["doctor", "--json"], env: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/nearcard-bus"])
        let check = doctor.json["checks"]?.arrayValue?.first { $0["check"] == "addressbook" }
        let said = check?["message"]?.stringValue ?? ""
        #expect(said.contains("reached over plain http (this machine only)") && !said.contains("certificate"), "\(doctor.stdout)")
    }

    /// Issue 51, point 10: a symlinked password file is refused as a password file (not a "key file"),
    /// naming the file it points to.
    @Test func aSymlinkedPasswordFileIsNamedAsOne() throws {
        let server = try HostileServer()
        defer { server.stop() }
        let (cli, password) = try home()
        defer { cli.cleanUp() }
        let link = cli.auxiliary.appendingPathComponent("password-link").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: password)
        let r = try cli.run(["addressbook", "add", server.url("full"), "--user", "ada", "--password-file", link, "--no-sync"])
        #expect(
            r.code != 0 && r.stderr.contains("reads a password file only directly") && r.stderr.contains("give the file itself, \(password)"), "\(r.stderr)")
        #expect(!r.stderr.contains("key file"), "\(r.stderr)")
    }

    @Test func eachServerFailureSaysWhatItIs() throws {
        let server = try HostileServer()
        defer { server.stop() }
        let (cli, password) = try home()
        defer { cli.cleanUp() }
        func add(_ url: String) throws -> CLI.Result {
            try cli.run(["addressbook", "add", url, "--user", "ada", "--password-file", password, "--include-qr"])
        }

        // Refused at the first look: one line each, exit 12, nothing kept and no promise to retry.
        for (mode, says) in [
            ("fail", "the server failed (500 on PROPFIND"), ("huge", "was too large (over 16 MiB"),
            ("malformed", "a body Nearcard does not read"), ("entity", "a body Nearcard does not read"),
        ] {
            let r = try add(server.url(mode))
            #expect(r.code == 12, "\(mode): exit \(r.code): \(r.stderr)")
            #expect(r.stderr.contains(says) && r.stderr.contains("nothing was added"), "\(mode): \(r.stderr)")
            #expect(!r.stderr.contains("will retry") && !r.stderr.contains("is the server up"), "\(mode): \(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1, "\(mode): more than one line: \(r.stderr)")
        }
        // A server that is not there: exit 8, and nothing kept is nothing retried.
        let closed = try add("http://127.0.0.1:1/book/")
        #expect(closed.code == 8 && closed.stderr.contains("cannot reach") && closed.stderr.contains("nothing was added"), "\(closed.stderr)")
        #expect(!closed.stderr.contains("will retry"), "\(closed.stderr)")
        let none = try cli.run(["addressbook", "status", "--json"])
        #expect(none.json.arrayValue?.isEmpty ?? false, "an account that failed was kept: \(none.stdout)")

        // Out of space: the account is kept (the server is fine otherwise) and the line says both.
        let full = try add(server.url("full"))
        #expect(full.code == 12, "exit \(full.code): \(full.stderr)")
        #expect(full.stderr.contains("out of space (507 Insufficient Storage on PUT"), "\(full.stderr)")
        #expect(full.stderr.contains("the address book is added"), "\(full.stderr)")
        let kept = try cli.run(["addressbook", "status", "--json"])
        let account = try #require(kept.json.arrayValue?.first, "\(kept.stdout)")
        #expect(account["toWrite"]?.doubleValue == 1, "the contact does not wait: \(kept.stdout)")
        let again = try cli.run(["addressbook", "sync"])
        #expect(again.code == 12 && again.stderr.contains("out of space") && again.stderr.contains("the contacts wait in the book"), "\(again.stderr)")
    }

    // Five minutes, not one: in the full suite the LAN tests keep the cooperative pool busy, and a test
    // can wait that long to be run at all.
    @Test(.timeLimit(.minutes(5))) func aRunningNodeSaysABackgroundFailureOnceAsAJSONLinesError() throws {
        let server = try HostileServer()
        defer { server.stop() }
        let (cli, password) = try home()
        defer { cli.cleanUp() }
        let add = try cli.run(["addressbook", "add", server.url("full"), "--user", "ada", "--password-file", password, "--include-qr", "--no-sync"])
        #expect(add.code == 0, "\(add.stderr)")

        var environment = ProcessInfo.processInfo.environment
        environment["NEARCARD_HOME"] = cli.home.path
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-\(UUID().uuidString)-listen.log").path
        let node = try ChildProcess(
            [CLI.executable.path, "listen", "--no-discovery", "--port", "0", "--accept", "all", "--jsonl"], environment: environment, log: log,
            pipes: true)
        defer {
            _ = node.stop(after: 5)
            try? FileManager.default.removeItem(atPath: log)
        }
        let errors = Mutex<[String]>([])
        node.readLines { line in
            if line.contains("\"event\":\"error\"") { errors.withLock { $0.append(line) } }
        }
        // The worker looks every 2 s and retries after 2 s, 4 s, 8 s: within 9 s it tried at least
        // three times, and said so once.
        let start = Date()
        while Date().timeIntervalSince(start) < 9 { Thread.sleep(forTimeInterval: 0.25) }
        let said = errors.withLock { $0 }
        #expect(said.count == 1, "\(said)")
        #expect(said.first?.contains("out of space") ?? false, "\(said)")
        #expect(said.first?.contains("tried again in 2 s") ?? false, "\(said)")
        let status = try cli.run(["addressbook", "status", "--json"])
        #expect(status.json.arrayValue?.first?["lastError"]?.stringValue?.contains("out of space") ?? false, "\(status.stdout)")
    }
}
