import Foundation
import NearcardCrypto
import NearcardSimulation
import NearcardTestSupport
import Testing

/// An active attacker on the LAN (docs/SECURITY.md "The man in the middle"): Mallory advertises
/// Bob's name or replays his presence tag, or sits between Alice and Bob. Names and adverts are free to forge;
/// the handshake proves who is at the other end, and the codes on the two screens differ.
@Suite(.serialized) struct ImpersonationTests {
    func log(_ name: String) -> URL { FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-\(UUID().uuidString)-\(name).log") }

    /// Waits until `person` sees a peer `match` accepts; returns it.
    func waitForPeer(_ lab: Lab, as person: TestPerson, _ what: String, _ match: (JSONValue) -> Bool) throws -> JSONValue {
        for _ in 0..<20 {
            let peers = try lab.nearcard(["peers", "--json", "--timeout", "1"], home: person.home).list()
            if let p = peers.first(where: match) { return p }
        }
        throw LabError("\(what) did not appear")
    }

    /// Mallory replays Bob's presence tag and name (as a passive listener could copy them from his TXT
    /// record) at her own port. Alice, who holds Bob's presence key, sees "Bob Honest (contact)" and asks
    /// for him by name: the dial expects Bob's DID, the handshake shows that the node there is not Bob,
    /// and nothing is stored on either side.
    @Test func aReplayedTagIsExposedByTheHandshake() throws {
        let lab = try Lab("sf")
        let bob = try TestPerson(name: "Bob Honest")
        let mallory = try TestPerson(name: "Mallory")
        let alice = try TestPerson(name: "Alice")
        defer { for p in [bob, mallory, alice] { p.cli.cleanUp() } }
        let bobKey = try befriend(alice, with: bob)
        let (_, port) = try lab.listen(home: mallory.home, ["--accept", "all", "--no-discovery"], log: log("mallory"))
        _ = try lab.spawn(
            [
                "/usr/bin/avahi-publish-service", "Bob Honest", "_nearcard._tcp", "\(port)",
                "v=2", "t=\(Presence.makeTag(key: bobKey))", "name=Bob Honest",
            ], log: log("spoof"))
        let seen = try waitForPeer(lab, as: alice, "Bob's replayed advert") { $0["contact"]?["did"]?.stringValue == bob.did }
        #expect(seen["display"] == "Bob Honest (contact)")

        let r = try lab.nearcard(["exchange", "Bob Honest", "--yes", "--json"], home: alice.home)
        #expect(r.code != 0, "an exchange with a node that cannot prove Bob's DID must fail")
        #expect(r.stderr.contains(bob.did), "the error names whom the dial expected: \(r.stderr)")
        #expect(try alice.contacts().count == 1 && mallory.contacts().isEmpty, "Alice's book holds Bob only; Mallory's nothing")
    }

    /// Mallory takes Bob's display name. Alice sees two "Bob Honest" and no fingerprint; the name alone
    /// is ambiguous (the CLI lists both with their peer ids). Alice holds Bob's presence key, so one of
    /// them shows as her contact; asking for that one reaches Bob, and the contact holds Bob's DID.
    @Test func aBorrowedNameDoesNotBorrowTheIdentity() throws {
        let lab = try Lab("bn")
        let bob = try TestPerson(name: "Bob Honest")
        let mallory = try TestPerson(name: "Bob Honest")
        let alice = try TestPerson(name: "Alice")
        defer { for p in [bob, mallory, alice] { p.cli.cleanUp() } }
        _ = try befriend(alice, with: bob)
        _ = try lab.listen(home: bob.home, ["--accept", "all"], log: log("bob"))
        _ = try lab.listen(home: mallory.home, ["--accept", "all"], log: log("mallory"))
        let real = try waitForPeer(lab, as: alice, "Bob's node") { $0["contact"]?["did"]?.stringValue == bob.did }
        let fake = try waitForPeer(lab, as: alice, "Mallory's node") { $0["name"] == "Bob Honest" && $0["contact"] == .null }
        #expect(real["display"] == "Bob Honest (contact)" && fake["display"] == "Bob Honest")
        #expect(real["fingerprint"] == nil && fake["fingerprint"] == nil, "no fingerprint before a session")

        // The name alone is ambiguous, and the CLI says so rather than guessing, with both peer ids.
        let byName = try lab.nearcard(["exchange", "Bob Honest", "--yes"], home: alice.home)
        #expect(byName.code == 2, "a name several peers show is a usage error, like any name that does not name one")
        let (realID, fakeID) = (real["id"]?.stringValue ?? "?", fake["id"]?.stringValue ?? "?")
        #expect(byName.stderr.contains(realID) && byName.stderr.contains(fakeID), "\(byName.stderr)")

        let r = try lab.nearcard(["exchange", realID, "--yes", "--json"], home: alice.home)
        #expect(r.code == 0, "\(r.stderr)")
        let contacts = try alice.contacts()
        #expect(contacts.count == 1 && contacts.first?["didPublicKey"]?.stringValue == bob.did)
    }

    /// Three laptops in three network namespaces on one bridge, each with its own avahi-daemon.
    /// Mallory, named like Bob, relays: Alice's request to her becomes her request to Bob. Alice and
    /// Bob see different codes on their screens (they compare them, as the code is there for), so both
    /// decline: no contact is stored anywhere, and neither ever held the other's DID.
    @Test func aRelayInTheMiddleShowsDifferentCodes() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-mitm-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let net = NetLab(tag: "ncm\(getpid() % 100_000)\(Int.random(in: 0..<100))", root: root)
        defer {
            net.tearDown()
            try? FileManager.default.removeItem(atPath: root)
        }
        let spaces = try net.bridgedSpaces(3)
        let bob = try TestPerson(name: "Bob Honest")
        let mallory = try TestPerson(name: "Bob Honest")
        let alice = try TestPerson(name: "Alice")
        defer { for p in [bob, mallory, alice] { p.cli.cleanUp() } }
        func wrap(_ s: NetLab.Space) -> String {
            (s.prefix + ["env"] + s.environment.map { "\($0)=\($1)" }).joined(separator: " ")
        }
        let script = CLI.packageRoot.appendingPathComponent("Tests/Interop/relay_driver.py").path
        let r = try CLI.run(
            executable: CLI.python,
            [
                script, "--nearcard", CLI.executable.path, "--alice", alice.home.path, "--bob", bob.home.path,
                "--mallory", mallory.home.path, "--wrap-alice", wrap(spaces[0]),
                "--wrap-bob", wrap(spaces[1]), "--wrap-mallory", wrap(spaces[2]),
            ])
        #expect(r.code == 0, "\(r.stderr)")
        let report = r.json
        let sas = report["sas"]
        #expect(sas?["alice"] == sas?["malloryWithAlice"], "Alice's session is with Mallory")
        #expect(sas?["alice"] != sas?["bob"], "the two people see different codes")
        #expect(
            report["alicePeerDID"]?.stringValue == mallory.did && report["bobPeerDID"]?.stringValue == mallory.did,
            "each honest person sees Mallory's DID, never the other's")
        #expect(report["decisions"]?["alice"] == "decline" && report["decisions"]?["bob"] == "decline")
        #expect(report["malloryToBob"]?["ok"] == false && report["alice"]?["ok"] == false)
        #expect(report["alice"]?["error"]?["code"] == "declined", "\(report["alice"] ?? .null)")
        // No contact is stored as verified, anywhere.
        for person in [alice, bob, mallory] {
            #expect(try person.contacts().isEmpty, "\(person.home.lastPathComponent) stored a contact")
        }
    }
}
