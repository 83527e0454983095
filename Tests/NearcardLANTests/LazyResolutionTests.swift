import Foundation
import NearcardCrypto
import NearcardProcess
import NearcardSimulation
import NearcardTestSupport
import Testing

/// A listening node resolves a stranger's addresses only when it dials it (docs/PERFORMANCE.md,
/// "Simulation scale"), on a real avahi-daemon: the stranger's `peer.found` carries its name, tag
/// and host but no address, and a dial by name resolves them and reaches it. A contact, recognised by
/// its presence tag alone (private mode), comes with its addresses (the outbox reaches it without a
/// dial by name) and is dialled as the contact.
@Suite struct LazyResolutionTests {
    func log(_ name: String) -> URL { FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-\(UUID().uuidString)-\(name).log") }

    @Test func aStrangerSeenWithoutAddressesIsDialledAndAContactIsRecognised() throws {
        let lab = try Lab("lz")
        let ada = try TestPerson(name: "Ada Lovelace")
        let grace = try TestPerson(name: "Grace Hopper")
        let viewer = try TestPerson(name: "Viewer")
        defer { for p in [ada, grace, viewer] { p.cli.cleanUp() } }
        try befriend(viewer, with: ada)
        _ = try lab.listen(home: ada.home, ["--accept", "all", "--private"], log: log("ada"))
        _ = try lab.listen(home: grace.home, ["--accept", "all"], log: log("grace"))
        let node = try lab.converse(
            [CLI.executable.path, "listen", "--jsonl", "--accept", "all", "--port", "0", "--home", viewer.home.path],
            log: log("viewer"))
        let lines = DiscoveryInteropTests.Lines(node)
        defer { node.stop(after: 5) }
        func found(_ what: String, _ match: @escaping (JSONValue) -> Bool) throws -> JSONValue {
            try #require(lines.wait(seconds: 30) { $0["event"]?.stringValue == "peer.found" && match($0) }, "\(what) was never seen")
        }

        let g = try found("Grace") { $0["name"]?.stringValue == "Grace Hopper" }
        #expect(g["addresses"]?.arrayValue?.isEmpty == true, "a stranger's addresses wait for a dial: \(g)")
        #expect(g["id"]?.stringValue?.count == 8 && g["host"]?.stringValue?.hasPrefix("nc-") == true && g["contact"] == .null, "\(g)")
        let a = try found("Ada, as a contact") { $0["contact"]?["did"]?.stringValue == ada.did }
        #expect(a["display"] == "Ada Lovelace (contact)" && a["name"] == .null, "\(a)")
        #expect(a["addresses"]?.arrayValue?.contains { $0["ip"] == "127.0.0.1" } == true, "a contact's addresses come with it: \(a)")

        // Grace by her announced name: her addresses are resolved for the dial.
        #expect(node.send(line: #"{"cmd":"exchange","peer":"Grace Hopper","ref":"g"}"#))
        let withGrace = lines.wait(seconds: 60) { $0["ref"]?.stringValue == "g" }
        #expect(withGrace?["ok"] == true, "\(String(describing: withGrace))")
        // Ada by the name the viewer keeps for her: the session must prove her DID.
        #expect(node.send(line: #"{"cmd":"exchange","peer":"Ada Lovelace","ref":"a"}"#))
        let withAda = lines.wait(seconds: 60) { $0["ref"]?.stringValue == "a" }
        #expect(withAda?["ok"] == true, "\(String(describing: withAda))")
        #expect(try grace.contacts().contains { $0["name"] == "Viewer" && $0["verificationStatus"] == "verified" })
        #expect(lines.wait(seconds: 0.2) { $0["event"]?.stringValue == "peer.lost" } == nil, "nobody left the list")
    }
}
