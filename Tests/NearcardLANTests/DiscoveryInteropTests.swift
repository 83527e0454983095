import Foundation
import NearcardCrypto
import NearcardTestSupport
import Testing

/// Nearcard against independent DNS-SD tools: avahi-browse finds our node; a service published by
/// avahi-publish shows in `nearcard peers`.
@Suite struct DiscoveryInteropTests {
    func log(_ name: String) -> URL { FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-\(UUID().uuidString)-\(name).log") }

    @Test func avahiBrowseFindsANearcardNode() throws {
        let lab = try Lab("ab")
        let ada = try TestPerson(name: "Ada Lovelace")
        defer { ada.cli.cleanUp() }
        let (_, port) = try lab.listen(home: ada.home, ["--accept", "all"], log: log("ada"))
        let r = try lab.run(["avahi-browse", "--terminate", "--resolve", "--parsable", "_nearcard._tcp"])
        let resolved = r.stdout.split(separator: "\n").filter { $0.hasPrefix("=") }
        let line = try #require(resolved.first { $0.contains("Ada\\032Lovelace") })
        #expect(line.contains(";\(port);"))
        #expect(line.contains("\"fp=\(ada.fingerprint)\""))
        #expect(line.contains("\"v=1\""))
        #expect(line.contains("\"name=Ada Lovelace\""))
    }

    @Test func privateModePublishesNoName() throws {
        let lab = try Lab("pm")
        let ada = try TestPerson(name: "Ada Lovelace")
        defer { ada.cli.cleanUp() }
        _ = try lab.listen(home: ada.home, ["--accept", "all", "--private"], log: log("ada"))
        let r = try lab.run(["avahi-browse", "--terminate", "--resolve", "--parsable", "_nearcard._tcp"])
        #expect(!r.stdout.contains("Ada"))
        #expect(r.stdout.contains("nearcard-\(ada.fingerprint.prefix(8))"))
        #expect(r.stdout.contains("fp=\(ada.fingerprint)"))
    }

    @Test func avahiPublishedServiceIsListedAndGoneOnceWithdrawn() throws {
        let lab = try Lab("ap")
        let someone = try TestPerson(name: "Viewer")
        defer { someone.cli.cleanUp() }
        // An independent publisher, and something answering on its port.
        let publisher = try lab.spawn(["avahi-publish", "-s", "Outside Node", "_nearcard._tcp", "7999", "v=1", "fp=0123456789abcdef", "name=Outside"], log: log("pub"))
        _ = try lab.spawn(["python3", "-c", "import socket,time;s=socket.socket();s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1);s.bind(('127.0.0.1',7999));s.listen();time.sleep(60)"], log: log("tcp"))
        var listed: JSONValue?
        for _ in 0..<5 where listed == nil {
            listed = try lab.nearcard(["peers", "--json", "--timeout", "1.5"], home: someone.home).json.arrayValue?.first { $0["instance"] == "Outside Node" }
        }
        let p = try #require(listed)
        #expect(p["fingerprint"] == "0123456789abcdef" && p["name"] == "Outside" && p["port"] == 7999)
        #expect(p["reachable"] == true)

        // Withdrawn (avahi-publish killed: it says goodbye): no longer listed.
        publisher.kill(SIGTERM)
        publisher.wait()
        usleep(500_000)
        let after = try lab.nearcard(["peers", "--json", "--timeout", "1.5"], home: someone.home).json.arrayValue ?? []
        #expect(!after.contains { $0["instance"] == "Outside Node" })
    }

    /// A node that is announced but does not answer (crashed without a goodbye) is not listed, unless --all.
    @Test func unreachableNodeIsDropped() throws {
        let lab = try Lab("ur")
        let someone = try TestPerson(name: "Viewer")
        defer { someone.cli.cleanUp() }
        _ = try lab.spawn(["avahi-publish", "-s", "Ghost", "_nearcard._tcp", "7998", "v=1", "fp=fedcba9876543210"], log: log("ghost"))
        usleep(1_500_000)
        let listed = try lab.nearcard(["peers", "--json", "--timeout", "1.5"], home: someone.home).json.arrayValue ?? []
        #expect(!listed.contains { $0["instance"] == "Ghost" })
        let all = try lab.nearcard(["peers", "--json", "--all", "--timeout", "1.5"], home: someone.home).json.arrayValue ?? []
        #expect(all.first { $0["instance"] == "Ghost" }?["reachable"] == false)
    }

    /// No avahi-daemon reachable: one line that names the fix, exit code 4.
    @Test func missingAvahiIsAClearError() throws {
        let someone = try TestPerson(name: "Viewer")
        defer { someone.cli.cleanUp() }
        let r = try someone.cli.run(["peers"], env: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/nearcard-test-bus"])
        #expect(r.code == 4)
        #expect(r.stderr.contains("avahi-daemon") && r.stderr.contains("start"))
        #expect(r.stderr.split(separator: "\n").count == 1)
        let x = try someone.cli.run(["exchange", "Somebody", "--yes"], env: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/nearcard-test-bus"])
        #expect(x.code == 4)
    }
}
