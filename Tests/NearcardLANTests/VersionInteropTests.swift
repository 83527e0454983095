import Foundation
import NearcardCrypto
import NearcardProcess
import NearcardSimulation
import NearcardTestSupport
import Testing

/// Version 3 beside version 2 (docs/PROTOCOL.md §21), against the independent Python peer in both
/// roles: a version-3 peer exchanges in version 3 (a field the node does not know set aside); a
/// version-2 peer still exchanges, dialling the node or dialled by it (the node falls back on
/// `unsupported_version`), and the contact says its card is of the older kind; mail and invitations
/// work across the two.
@Suite(.serialized) struct VersionInteropTests {
    let peer = CLI.packageRoot.appendingPathComponent("Tests/Interop/python_peer.py").path
    func log(_ name: String) -> URL { FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-\(UUID().uuidString)-\(name).log") }

    func contact(_ person: TestPerson, named name: String) throws -> JSONValue? {
        for _ in 0..<50 {
            if let c = try person.contacts().first(where: { $0["name"]?.stringValue == name }) { return c }
            usleep(100_000)
        }
        return nil
    }

    /// The Python peer dials the node: in version 3 (16 digests both ways, its unknown field checked and
    /// dropped), then — another peer — in version 2; each then delivers a follow-up message (mail is
    /// `nearcard-mail/2` whatever the exchange's version) and presents a QR invitation.
    @Test func peersOfBothVersionsDialTheNode() throws {
        let node = try TestPerson(name: "Swift Node", card: ["--company", "Nearcard", "--email", "swift@example.org", "--pronouns", "she/her"])
        defer { node.cli.cleanUp() }
        #expect(try node.cli.run(["share", "--fields", "name,company,email,pronouns"]).code == 0)
        let lab = try Lab("v3")
        let (process, port) = try lab.listen(home: node.home, ["--no-discovery", "--accept", "all"], log: log("node"))
        defer { process.kill() }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }

        for version in [3, 2] {
            let name = "Python v\(version)"
            let state = dir.appendingPathComponent("v\(version).json").path
            let r = try lab.run(
                [CLI.python, peer, "127.0.0.1", String(port), "--name", name, "--speak", String(version), "--state", state]
                    + (version == 3 ? ["--extra", "pronouns=they/them", "--extra", "favouriteColour=teal"] : []))
            #expect(r.code == 0, "\(r.stdout) \(r.stderr)")
            for (check, ok) in r.json["checks"]?.objectValue ?? [:] { #expect(ok == true, "v\(version): python's check \(check)") }
            #expect(r.json["version"] == .number(Double(version)))
            // Pronouns travel in version 3 only: a version-2 peer is sent the seven fields it knows.
            var expected: JSONValue = ["company": "Nearcard", "email": "swift@example.org", "name": "Swift Node"]
            if version == 3 { expected = ["company": "Nearcard", "email": "swift@example.org", "name": "Swift Node", "pronouns": "she/her"] }
            #expect(r.json["theirCard"] == expected)
            #expect(r.json["hiddenFields"] == .number(version == 3 ? 12 : 4), "16 digests (4 opened) or 7 (3 opened)")
            let c = try #require(try contact(node, named: name))
            #expect(c["exchangeVersion"] == .number(Double(version)))
            #expect(c["company"] == "Python Software" && c["verificationStatus"] == "verified")
            #expect(c["favouriteColour"] == nil, "nothing of a field the node does not know is kept")
            #expect(c["pronouns"] == (version == 3 ? "they/them" : .null))
            if version == 2 {
                #expect(c["olderCard"]?.stringValue?.hasPrefix("of the older kind") == true, "\(c)")
                let shown = try node.cli.run(["contacts", "show", name])
                #expect(shown.stdout.contains("of the older kind: their Nearcard speaks exchange version 2"), "\(shown.stdout)")
            } else {
                #expect(c["olderCard"] == .null)
            }
            // Mail keeps working with a contact of either version.
            let mail = try lab.run([CLI.python, peer, "127.0.0.1", String(port), "--state", state, "--mail-text", "after v\(version)"])
            #expect(mail.code == 0, "\(mail.stdout) \(mail.stderr)")
            // And an invitation: the same peer, presenting one the node made.
            let invite = try lab.nearcard(["qr", "invite", "--text", "--port", String(port)], home: node.home).stdout.trimmingCharacters(
                in: .whitespacesAndNewlines)
            let invited = try lab.run([CLI.python, peer, "--invite", invite, "--name", name + " invited", "--speak", String(version)])
            #expect(invited.code == 0, "\(invited.stdout) \(invited.stderr)")
            let ci = try #require(try contact(node, named: name + " invited"))
            #expect(ci["tags"]?.arrayValue?.contains("invited by QR") == true && ci["exchangeVersion"] == .number(Double(version)))
        }
        let inbox = try node.cli.run(["inbox", "--json"]).json.arrayValue ?? []
        #expect(Set(inbox.compactMap { $0["text"]?.stringValue }) == ["after v3", "after v2"], "\(inbox)")
    }

    /// The node dials the Python peer by address. A version-2 responder answers the node's version-3
    /// hello with `unsupported_version`; the node dials again at once in version 2 and sends only the
    /// seven fields version 2 knows. A version-3 responder is answered in version 3, in one session.
    @Test(arguments: [2, 3]) func theNodeDialsAResponderOfEitherVersion(_ version: Int) throws {
        let node = try TestPerson(name: "Swift Node", card: ["--company", "Nearcard", "--pronouns", "she/her"])
        defer { node.cli.cleanUp() }
        #expect(try node.cli.run(["share", "--fields", "name,company,pronouns"]).code == 0)
        let lab = try Lab("d\(version)")
        let port = 47_900 + version
        let responderLog = log("responder")
        let responder = try lab.spawn(
            [CLI.python, peer, "--listen", String(port), "--sessions", version == 2 ? "2" : "1", "--speak", String(version), "--name", "Python Responder"],
            log: responderLog)
        defer { responder.kill() }
        var listening = false
        for _ in 0..<50 where !listening {
            usleep(100_000)
            listening = (try? String(contentsOf: responderLog, encoding: .utf8))?.contains("listening") == true
        }
        #expect(listening)
        let r = try lab.nearcard(["exchange", "127.0.0.1:\(port)", "--yes", "--json"], home: node.home)
        #expect(r.code == 0, "\(r.stdout) \(r.stderr)")
        #expect(r.json["exchangeVersion"] == .number(Double(version)))
        responder.wait()
        let sessions = try String(contentsOf: responderLog, encoding: .utf8).split(separator: "\n").dropFirst().map { try JSONParser.parse(String($0)) }
        if version == 2 {
            #expect(sessions.count == 2, "\(sessions)")
            #expect(sessions.first?["version"] == 3 && sessions.first?["aborted"]?["code"] == "unsupported_version")
        } else {
            #expect(sessions.count == 1, "\(sessions)")
        }
        let last = try #require(sessions.last)
        #expect(last["completed"] == true && last["version"] == .number(Double(version)), "\(last)")
        for (check, ok) in last["checks"]?.objectValue ?? [:] { #expect(ok == true, "v\(version): python's check \(check)") }
        #expect(
            last["theirCard"]
                == (version == 3 ? ["company": "Nearcard", "name": "Swift Node", "pronouns": "she/her"] : ["company": "Nearcard", "name": "Swift Node"]))
    }
}
