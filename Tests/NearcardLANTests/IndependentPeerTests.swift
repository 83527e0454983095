import Foundation
import NearcardCrypto
import NearcardProcess
import NearcardSimulation
import NearcardTestSupport
import Testing

/// A peer written in Python from docs/PROTOCOL.md alone (noiseprotocol, cryptography, PyNaCl)
/// exchanges cards with a real node over loopback: the spec is precise enough to implement.
@Suite struct IndependentPeerTests {
    let peer = CLI.packageRoot.appendingPathComponent("Tests/Interop/python_peer.py").path
    func log(_ name: String) -> URL { FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-\(UUID().uuidString)-\(name).log") }

    /// The node in a network namespace of its own; the Python peer is run in it too (`lab.run`).
    func startNode(_ person: TestPerson) throws -> (Lab, ChildProcess, Int, URL) {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-\(UUID().uuidString).log")
        let lab = try Lab("ip")
        let (node, port) = try lab.listen(home: person.home, ["--no-discovery", "--accept", "all", "--message", "hello python"], log: log)
        return (lab, node, port, log)
    }

    @Test func pythonPeerCompletesAnExchangeAndEachSideVerifiesTheOther() throws {
        let node = try TestPerson(name: "Swift Node", card: ["--company", "Nearcard", "--email", "swift@example.org"])
        defer { node.cli.cleanUp() }
        let (lab, process, port, _) = try startNode(node)
        defer { process.kill() }
        let r = try lab.run([CLI.python, peer, "127.0.0.1", String(port), "--name", "Python Peer", "--message", "hello swift"])
        #expect(r.code == 0, "\(r.stderr)")
        let report = r.json
        #expect(report["completed"] == true)
        // Every check the Python side makes of our card (§9, §10) is there, and holds.
        let checks = report["checks"]?.objectValue ?? [:]
        let expected: Set = [
            "signature", "sender", "receiver", "binding", "pubKey", "signPubKey", "timestamp", "nonce", "message", "presenceKey",
            "sdJwtSignature", "disclosures", "route",
        ]
        #expect(Set(checks.keys) == expected, "python's checks: \(r.stdout)")
        for (check, ok) in checks { #expect(ok == true, "python's check \(check)") }
        #expect(report["theirCard"] == ["company": "Nearcard", "name": "Swift Node"], "only the default shared fields")
        #expect(report["hiddenFields"] == 5)
        #expect(report["theirMessage"] == "hello python")
        #expect(report["peerFingerprint"]?.stringValue == node.fingerprint)
        // The node stored the Python peer as a verified contact.
        var contact: JSONValue?
        for _ in 0..<50 where contact == nil {
            contact = try node.contacts().first
            if contact == nil { usleep(100_000) }
        }
        #expect(contact?["name"] == "Python Peer" && contact?["verificationStatus"] == "verified")
        #expect(contact?["didPublicKey"] == report["myDid"])
        #expect(contact?["theirEphemeralMessage"] == "hello swift")
        #expect(contact?["company"] == "Python Software" && contact?["email"] == .null, "only what Python disclosed")
    }

    /// Names on the wire hold no bidirectional control (§6.1, revision 2.2): a peer whose hello names it
    /// "Eve\u{202E}gnp.exe" (which a terminal would print as "Eveexe.png") is refused with `bad_identity`
    /// before anyone is asked, and nothing is stored. A message may hold one (it is free text), and the
    /// terminal prints it isolated, so it cannot reorder the line around it.
    @Test func aPeerNamedWithAnOverrideIsRefusedAndItsMessageIsolated() throws {
        let node = try TestPerson(name: "Swift Node")
        defer { node.cli.cleanUp() }
        let (lab, process, port, log) = try startNode(node)
        defer { process.kill() }
        let eve = try lab.run([CLI.python, peer, "127.0.0.1", String(port), "--name", "Eve\u{202E}gnp.exe"])
        #expect(eve.code == 1 && eve.json["aborted"]?["code"] == "bad_identity", "\(eve.stdout) \(eve.stderr)")
        #expect(eve.json["aborted"]?["reason"]?.stringValue?.contains("bidirectional control (U+202E)") == true, "\(eve.stdout)")
        #expect(try node.contacts().isEmpty, "nothing stored of Eve")
        let said = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        #expect(!said.contains("\u{202E}"), "the override never reached the terminal: \(said)")

        let mallory = try lab.run([CLI.python, peer, "127.0.0.1", String(port), "--name", "Mallory", "--message", "see \u{202E}gnp.exe"])
        #expect(mallory.code == 0, "\(mallory.stdout) \(mallory.stderr)")
        var id: String?
        for _ in 0..<50 where id == nil {
            id = try node.contacts().first?["id"]?.stringValue
            if id == nil { usleep(100_000) }
        }
        let shown = try node.cli.run(["contacts", "show", try #require(id)])
        #expect(shown.stdout.contains("\u{2068}see \u{202E}gnp.exe\u{2069}"), "isolated between FSI and PDI: \(shown.stdout.debugDescription)")
    }

    /// A recorded session replayed byte for byte: the node's fresh ephemeral key makes the recorded
    /// handshake's last message undecryptable, so the session ends there and nothing new is stored.
    @Test func aReplayedSessionIsRefused() throws {
        let node = try TestPerson(name: "Swift Node")
        defer { node.cli.cleanUp() }
        let (lab, process, port, _) = try startNode(node)
        defer { process.kill() }
        let recording = try node.cli.write("", to: "session.json")
        let honest = try lab.run([CLI.python, peer, "127.0.0.1", String(port), "--record", recording])
        #expect(honest.code == 0, "\(honest.stderr)")
        #expect(try node.contacts().count == 1)
        let before = try node.contacts()

        let r = try lab.run([CLI.python, peer, "127.0.0.1", String(port), "--replay", recording])
        #expect(r.code == 0, "the node went along with a replay: \(r.stdout)")
        #expect(r.json["closedByNode"] == true)
        #expect((r.json["framesSent"]?.doubleValue ?? 99) <= 2, "refused at the handshake's last message: \(r.stdout)")
        #expect((r.json["framesRecorded"]?.doubleValue ?? 0) > 3)
        #expect(try node.contacts() == before, "a replay changes nothing in the contact book")
    }

    /// The rules another implementation most easily gets wrong, broken on purpose from the wire (not
    /// through the Swift code): the node answers each with the code §13's table gives, or closes
    /// without an abort where no transport keys exist yet; it stores nothing and keeps serving.
    @Test(
        arguments: [
            ("grapheme-name", "too_large", "301 characters; at most 256"),
            ("long-message", "too_large", "141 characters; at most 140"),
            ("control-message", "protocol_error", "control character U+000D"),
            ("pretty-hello", "protocol_error", "canonical"),
            ("null-disclosure", "bad_card", "discloses phone as null"),
            ("message3-payload", nil, ""),
            ("old-tag", nil, ""),
            ("hello-version-1", "unsupported_version", "speaks hello version 1"),
            ("identity-twice", "protocol_error", "identity twice"),
            ("no-identity", "protocol_error", "never showed its identity"),
            ("reflected-proof", "bad_identity", "does not verify"),
            ("invite-without-identity", "protocol_error", "with an identity"),
            ("nine-hints", "too_large", "9 hints; at most 8"),
            ("extra-member", "bad_card", "unknown member \"x\""),
            ("bidi-name", "bad_card", "bidirectional control (U+202E)"),
        ] as [(String, String?, String)])
    func wireRulesBrokenByAnotherImplementation(violation: String, code: String?, reason: String) throws {
        let node = try TestPerson(name: "Swift Node")
        defer { node.cli.cleanUp() }
        let (lab, process, port, _) = try startNode(node)
        defer { process.kill() }
        let r = try lab.run([CLI.python, peer, "127.0.0.1", String(port), "--violate", violation])
        #expect(r.code == 1, "\(r.stdout) \(r.stderr)")
        if let code {
            #expect(r.json["aborted"]?["code"]?.stringValue == code, "\(r.stdout)")
            #expect(r.json["aborted"]?["reason"]?.stringValue?.contains(reason) == true, "\(r.stdout)")
        } else {
            #expect(r.json["closedWithoutAbort"] == true, "\(r.stdout)")
            #expect(r.json["aborted"] == nil)
        }
        usleep(200_000)
        #expect(try node.contacts().isEmpty)
        // …and the node still serves an honest peer.
        let honest = try lab.run([CLI.python, peer, "127.0.0.1", String(port)])
        #expect(honest.code == 0, "\(honest.stdout) \(honest.stderr)")
    }

    /// A dishonest peer's card, each way: the node refuses it with the specific reason and stores nothing.
    @Test(arguments: [
        ("binding", "binding_mismatch_session"), ("receiver", "binding_mismatch_receiver"),
        ("field", "field_not_disclosed"), ("route", "sealed route"),
    ])
    func tamperedCardsAreRefusedWithTheirReason(tamper: String, reason: String) throws {
        let node = try TestPerson(name: "Swift Node")
        defer { node.cli.cleanUp() }
        let (lab, process, port, log) = try startNode(node)
        defer { process.kill() }
        let r = try lab.run([CLI.python, peer, "127.0.0.1", String(port), "--tamper", tamper])
        #expect(r.code == 1)
        #expect(r.json["aborted"]?["code"] == "bad_card", "\(r.stdout)")
        #expect(r.json["aborted"]?["reason"]?.stringValue?.contains(reason) == true)
        usleep(200_000)
        #expect(try node.contacts().isEmpty)
        #expect(try String(contentsOf: log, encoding: .utf8).contains("nothing was stored"))
    }

    /// Protocol v2, §5 and §6.2, from the wire: a stranger written from the spec alone dials and stops
    /// after each message. A private node that declines shows it nothing but a per-session Noise key; one that
    /// accepts shows who it is only in its acceptance; a stranger posing as a contact gets a sealed
    /// identity it cannot open; a mail message 1 not made for the node's key gets no answer.
    /// A sealed identity's size says nothing of the person (§6.2, revision 2.1): nodes named "Private Pat"
    /// and "Node Alpha" (and one with a long name in another script) answer a stranger's "prove yourself"
    /// with sealed identities of one size.
    @Test func aSealedIdentityHasOneSizeWhateverTheName() throws {
        let lab = try Lab("sz")
        let stranger = CLI.packageRoot.appendingPathComponent("Tests/Interop/stranger_peer.py").path
        var sizes: [String: Int] = [:]
        // The last: 60 four-byte characters, 240 bytes (revision 2.1 sealed a name over ~216 bytes larger).
        for name in ["Private Pat", "Node Alpha", "Αλεξάνδρα Παπαδοπούλου-Κωνσταντινίδη", String(repeating: "🦊", count: 60)] {
            let person = try TestPerson(name: name)
            defer { person.cli.cleanUp() }
            let (node, port) = try lab.listen(home: person.home, ["--no-discovery", "--accept", "all"], log: log("sz"))
            defer { node.kill(SIGTERM) }
            let r = try lab.run([CLI.python, stranger, "127.0.0.1", String(port), "--ask-sealed", "--stop-after", "5", "--drain", "0"])
            let sealed = try #require(r.json["holds"]?["sealedIdentity"]?.stringValue, "\(r.stdout) \(r.stderr)")
            sizes[name] = try Base64.urlDecode(sealed).count
            // A contact holding the presence key opens the padded seal (an implementation from the spec).
            let key = Base64.urlEncode(try presenceKey(of: person))
            let contact = try lab.run([CLI.python, peer, "127.0.0.1", String(port), "--recall-key=\(key)", "--expect-did", person.did])
            #expect(contact.code == 0 && contact.json["sealedIdentityOpened"] == true, "\(contact.stdout) \(contact.stderr)")
        }
        #expect(Set(sizes.values) == [1024], "\(sizes)")
    }

    @Test func aStrangerLearnsNothingBeforeConsent() throws {
        let lab = try Lab("is")
        let grace = try TestPerson(name: "Grace Hopper")
        defer { grace.cli.cleanUp() }
        let empty = grace.home.appendingPathComponent("nobody.txt")
        try "".write(to: empty, atomically: true, encoding: .utf8)
        let decliningLog = log("declining")
        let (declining, port) = try lab.listen(
            home: grace.home, ["--private", "--no-discovery", "--accept", "allowlist:\(empty.path)", "--probe-summary", "1"], log: decliningLog)
        let stranger = CLI.packageRoot.appendingPathComponent("Tests/Interop/stranger_peer.py").path
        let identifying = ["did", "name", "pubKey", "signPubKey", "presenceKey", "fingerprint", "cardFields"]
        let longTerm = try grace.cli.run(["id", "--json"]).json["pubKey"]
        for n in [2, 5, 7, 13] {
            let r = try lab.run([CLI.python, stranger, "127.0.0.1", String(port), "--stop-after", String(n), "--decline-expected"])
            // The stranger ran and reported (an empty report would hold nothing either).
            #expect(r.json["stoppedAfter"]?.integerValue != nil, "stopping after \(n): \(r.stdout) \(r.stderr)")
            let holds = r.json["holds"]?.objectValue ?? [:]
            #expect(identifying.allSatisfy { holds[$0] == nil }, "stopping after \(n), a stranger declined holds \(holds)")
            #expect(holds["sessionStatic"] != nil && holds["sessionStatic"] != longTerm, "only a per-session key: \(r.stdout)")
            // The refusal says it is one and nothing else: no "not on the allowlist" (what kind of node declined).
            if n >= 7 { #expect(r.json["declined"] != nil && r.json["declined"]?["reason"] == nil, "the decision read: \(r.stdout)") }
        }
        // A stranger who stopped before completing the handshake (after message 2) is a half-open
        // connection, summed up with the probes (§14); none is reported as a lost exchange with someone.
        var reported = false
        for _ in 0..<30 where !reported {
            reported = ((try? String(contentsOf: decliningLog, encoding: .utf8)) ?? "").contains("ended before starting an exchange")
            if !reported { usleep(100_000) }
        }
        #expect(reported, "the listener sums up the stranger who stopped after message 2")
        declining.kill(SIGTERM)
        declining.wait()

        let (accepting, port2) = try lab.listen(home: grace.home, ["--no-discovery", "--accept", "all"], log: log("accepting"))
        defer { accepting.kill(SIGTERM) }
        let before = try lab.run([CLI.python, stranger, "127.0.0.1", String(port2), "--stop-after", "6", "--drain", "0"])
        // (The stranger ran to where it was told to stop: an empty report holds nothing either.)
        #expect(before.code == 0 && before.json["stoppedAfter"] == 6, "\(before.stdout) \(before.stderr)")
        #expect(before.json["holds"]?["did"] == nil, "nothing before the node decided: \(before.stdout)")
        let after = try lab.run([CLI.python, stranger, "127.0.0.1", String(port2), "--stop-after", "7", "--drain", "0"])
        #expect(
            after.json["holds"]?["did"]?.stringValue == grace.did && after.json["holds"]?["identityVerified"] == true,
            "the acceptance carries the proven identity: \(after.stdout)")
        #expect(after.json["holds"]?["presenceKey"] == nil, "the presence key comes only with the card, after both accepted")
        let posing = try lab.run([CLI.python, stranger, "127.0.0.1", String(port2), "--ask-sealed", "--stop-after", "7", "--drain", "0"])
        #expect(posing.code == 0 && posing.json["stoppedAfter"] == 7, "\(posing.stdout) \(posing.stderr)")
        #expect(
            posing.json["holds"]?["sealedIdentity"] != nil && posing.json["holds"]?["did"] == nil,
            "a stranger posing as a contact cannot open what it is sent: \(posing.stdout)")
        for probe in ["ik", "xx-tag"] {
            let m = try lab.run([CLI.python, stranger, "127.0.0.1", String(port2), "--mail-probe", probe])
            #expect(m.code == 0, "a \(probe) mail probe got an answer: \(m.stdout)")
        }
    }
}
