import Foundation
import NearcardCrypto
import NearcardSimulation
import NearcardTestSupport
import Testing

/// An active attacker on the LAN (docs/SECURITY.md "The man in the middle"): Mallory advertises
/// Bob's name or fingerprint, or sits between Alice and Bob. Names and adverts are free to forge;
/// the handshake proves who is at the other end, and the codes on the two screens differ.
@Suite(.serialized) struct ImpersonationTests {
    func log(_ name: String) -> URL { FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-\(UUID().uuidString)-\(name).log") }

    func waitForPeer(_ lab: Lab, as person: TestPerson, fingerprint: String) throws {
        for _ in 0..<20 {
            let peers = try lab.nearcard(["peers", "--json", "--timeout", "1"], home: person.home).json.arrayValue ?? []
            if peers.contains(where: { $0["fingerprint"]?.stringValue == fingerprint }) { return }
        }
        throw LabError("no peer with fingerprint \(fingerprint) appeared")
    }

    /// Mallory announces Bob's name and fingerprint (copied from his TXT record) at her own port.
    /// Alice asks for Bob by fingerprint, as she reads it on his screen: the handshake shows that the
    /// node there cannot prove it, and nothing is stored on either side.
    @Test func aSpoofedFingerprintIsExposedByTheHandshake() throws {
        let lab = try Lab("sf")
        let bob = try TestPerson(name: "Bob Honest"), mallory = try TestPerson(name: "Mallory"), alice = try TestPerson(name: "Alice")
        defer { for p in [bob, mallory, alice] { p.cli.cleanUp() } }
        let (_, port) = try lab.listen(home: mallory.home, ["--accept", "all", "--no-discovery"], log: log("mallory"))
        _ = try lab.spawn(["/usr/bin/avahi-publish-service", "Bob Honest", "_nearcard._tcp", "\(port)",
                           "v=1", "fp=\(bob.fingerprint)", "name=Bob Honest"], log: log("spoof"))
        try waitForPeer(lab, as: alice, fingerprint: bob.fingerprint)

        let r = try lab.nearcard(["exchange", String(bob.fingerprint.prefix(10)), "--yes", "--json"], home: alice.home)
        #expect(r.code != 0, "an exchange with a node that cannot prove Bob's fingerprint must fail")
        #expect(r.stderr.lowercased().contains("fingerprint"), "the error names the fingerprint: \(r.stderr)")
        #expect(try alice.contacts().isEmpty && mallory.contacts().isEmpty)
    }

    /// Mallory takes Bob's display name. Alice sees two "Bob Honest" with different fingerprints;
    /// asking by Bob's fingerprint reaches Bob, and the contact holds Bob's DID.
    @Test func aBorrowedNameDoesNotBorrowTheIdentity() throws {
        let lab = try Lab("bn")
        let bob = try TestPerson(name: "Bob Honest"), mallory = try TestPerson(name: "Bob Honest"), alice = try TestPerson(name: "Alice")
        defer { for p in [bob, mallory, alice] { p.cli.cleanUp() } }
        _ = try lab.listen(home: bob.home, ["--accept", "all"], log: log("bob"))
        _ = try lab.listen(home: mallory.home, ["--accept", "all"], log: log("mallory"))
        try waitForPeer(lab, as: alice, fingerprint: bob.fingerprint)
        try waitForPeer(lab, as: alice, fingerprint: mallory.fingerprint)

        let peers = try lab.nearcard(["peers", "--json", "--timeout", "1"], home: alice.home).json.arrayValue ?? []
        let bobs = peers.filter { $0["name"] == "Bob Honest" }
        #expect(Set(bobs.compactMap { $0["fingerprint"]?.stringValue }) == [bob.fingerprint, mallory.fingerprint])
        // The name alone is ambiguous, and the CLI says so rather than guessing, with both fingerprints.
        let byName = try lab.nearcard(["exchange", "Bob Honest", "--yes"], home: alice.home)
        #expect(byName.code == 2, "a name several peers show is a usage error, like any name that does not name one")
        #expect(byName.stderr.contains(String(bob.fingerprint.prefix(12))) && byName.stderr.contains(String(mallory.fingerprint.prefix(12))),
                "\(byName.stderr)")

        let r = try lab.nearcard(["exchange", String(bob.fingerprint.prefix(10)), "--yes", "--json"], home: alice.home)
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
        defer { net.tearDown(); try? FileManager.default.removeItem(atPath: root) }
        let spaces = try net.bridgedSpaces(3)
        let bob = try TestPerson(name: "Bob Honest"), mallory = try TestPerson(name: "Bob Honest"), alice = try TestPerson(name: "Alice")
        defer { for p in [bob, mallory, alice] { p.cli.cleanUp() } }
        func wrap(_ s: NetLab.Space) -> String {
            (s.prefix + ["env"] + s.environment.map { "\($0)=\($1)" }).joined(separator: " ")
        }
        let script = CLI.packageRoot.appendingPathComponent("Tests/Interop/relay_driver.py").path
        let r = try CLI.run(executable: CLI.python, [script, "--nearcard", CLI.executable.path, "--alice", alice.home.path, "--bob", bob.home.path,
                                                     "--mallory", mallory.home.path, "--wrap-alice", wrap(spaces[0]),
                                                     "--wrap-bob", wrap(spaces[1]), "--wrap-mallory", wrap(spaces[2])])
        #expect(r.code == 0, "\(r.stderr)")
        let report = r.json
        let sas = report["sas"]
        #expect(sas?["alice"] == sas?["malloryWithAlice"], "Alice's session is with Mallory")
        #expect(sas?["alice"] != sas?["bob"], "the two people see different codes")
        #expect(report["alicePeerDID"]?.stringValue == mallory.did && report["bobPeerDID"]?.stringValue == mallory.did,
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
