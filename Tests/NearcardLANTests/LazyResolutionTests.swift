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

    /// In a crowd (more than 64 announcements) a listening node lists a newcomer by the name it is
    /// announced under at once, before reading its records, and reads them in turn (issue 48: 500
    /// nodes on one avahi-daemon): the second `peer.found` carries its id and version. A contact
    /// announcing the name it is kept under, and the node's own name, are read at once. A dial by
    /// name to a peer not read yet reads it and reaches it.
    @Test func inACrowdANewcomerIsListedByNameAndReadInTurn() throws {
        let lab = try Lab("cr")
        let ada = try TestPerson(name: "Ada Lovelace")
        let grace = try TestPerson(name: "Grace Hopper")
        let viewer = try TestPerson(name: "Viewer")
        defer { for p in [ada, grace, viewer] { p.cli.cleanUp() } }
        try befriend(viewer, with: ada)
        // 70 announcements of nobody in particular (nothing listens on their ports).
        for i in 1...70 {
            _ = try lab.spawn(
                ["avahi-publish", "-s", "Crowd \(i)", "_nearcard._tcp", String(7000 + i), "v=2", "name=Crowd \(i)", "t=" + String(format: "%032x", i)],
                log: log("crowd\(i)"))
        }
        let node = try lab.converse(
            [CLI.executable.path, "listen", "--jsonl", "--accept", "all", "--port", "0", "--home", viewer.home.path],
            log: log("viewer"))
        let lines = DiscoveryInteropTests.Lines(node)
        defer { node.stop(after: 5) }
        func founds(_ instance: String) -> [JSONValue] {
            lines.all { $0["event"]?.stringValue == "peer.found" && $0["instance"]?.stringValue == instance }
        }
        /// Whether `done` holds within `seconds` (asked every 0.1 s).
        func within(_ seconds: Double, _ done: () -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if done() { return true }
                usleep(100_000)
            }
            return done()
        }
        #expect(within(60) { (1...70).allSatisfy { !founds("Crowd \($0)").isEmpty } }, "the crowd was listed")
        let pending = (1...70).filter { founds("Crowd \($0)").first?["recordsPending"] == true }
        #expect(!pending.isEmpty, "past 64 announcements, some are listed by name first")
        for i in pending {
            let first = founds("Crowd \(i)")[0]
            #expect(first["name"] == .string("Crowd \(i)") && first["display"] == .string("Crowd \(i)") && first["id"] == .null, "\(first)")
        }

        // Ada, a contact announcing the name she is kept under, is read at once: recognised in her first sighting.
        _ = try lab.listen(home: ada.home, ["--accept", "all"], log: log("ada"))
        let a = try #require(lines.wait(seconds: 30) { $0["event"]?.stringValue == "peer.found" && $0["instance"]?.stringValue == "Ada Lovelace" })
        #expect(a["contact"]?["did"]?.stringValue == ada.did && a["recordsPending"] == false, "\(a)")
        // Grace, a stranger, is listed by name, then read in turn (200 reads a second for the LAN: ~3 a second here).
        _ = try lab.listen(home: grace.home, ["--accept", "all"], log: log("grace"))
        let g = try #require(lines.wait(seconds: 30) { $0["event"]?.stringValue == "peer.found" && $0["instance"]?.stringValue == "Grace Hopper" })
        #expect(g["recordsPending"] == true && g["name"] == "Grace Hopper" && g["id"] == .null && g["version"] == .null, "\(g)")
        #expect(within(60) { founds("Grace Hopper").contains { $0["recordsPending"] == false } }, "Grace's records were never read")
        let gRead = try #require(founds("Grace Hopper").last)
        #expect(gRead["id"]?.stringValue?.count == 8 && gRead["version"] == 2 && gRead["name"] == "Grace Hopper", "\(gRead)")
        #expect(founds("Viewer").isEmpty, "its own announcement is not a peer")

        // Every pending one is read in the end, and a dial by name reaches Grace.
        #expect(node.send(line: #"{"cmd":"exchange","peer":"Grace Hopper","ref":"g"}"#))
        let withGrace = lines.wait(seconds: 60) { $0["ref"]?.stringValue == "g" }
        #expect(withGrace?["ok"] == true, "\(String(describing: withGrace))")
        let lost = lines.all { $0["event"]?.stringValue == "peer.lost" }
        #expect(lost.isEmpty, "nobody left the list: \(lost)")
    }
}
