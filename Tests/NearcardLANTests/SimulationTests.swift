import Foundation
import NearcardCrypto
import NearcardProcess
import NearcardSimulation
import NearcardTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `nearcard simulate`: real node processes discover each other and exchange; the summary is true
/// (checked against the contacts the nodes stored), and nothing the run made outlives it.
@Suite(.serialized) struct SimulationTests {
    func namespaces(of pid: pid_t) throws -> [String] {
        let r = try CLI.run(executable: "/usr/sbin/ip", ["netns", "list"])
        return r.stdout.split(separator: "\n").map { String($0.split(separator: " ")[0]) }.filter { $0.hasPrefix("ncs\(pid)") }
    }

    @Test func allPairsOnLoopbackWithoutRoot() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let r = try cli.run(["simulate", "--peers", "4", "--no-discovery", "--json"])
        #expect(r.code == 0, "\(r.stderr)")
        #expect(r.json["attempts"] == 6 && r.json["successes"] == 6 && r.json["failures"] == [:])
        #expect(r.json["contactsStored"] == 12 && r.json["contactsExpected"] == 12, "both sides of every exchange stored a verified contact")
        #expect((r.json["latencyMs"]?["p50"]?.doubleValue ?? 0) > 0 && r.json["mode"] == "direct")
        #expect(r.stderr.contains("Exchanging: 6 exchanges"), "progress on stderr")
    }

    /// The default: one private namespace whose avahi-daemon works on its loopback; nodes find each
    /// other over DNS-SD and exchange, two rounds.
    @Test func nodesDiscoverEachOtherAndExchangeInAPrivateNamespace() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        // Namespaces need root: this is the one command the tests run as root (its nodes, too).
        let r = try cli.runBuilt(["simulate", "--peers", "5", "--rounds", "2", "--json"])
        #expect(r.code == 0, "\(r.stderr)")
        #expect(r.json["attempts"] == 20 && r.json["successes"] == 20 && r.json["undiscoveredPeers"] == 0)
        #expect(r.json["discoveryMs"]?.doubleValue != nil && r.json["contactsStored"] == 20)
        // The human summary names the figures.
        let text = try cli.runBuilt(["simulate", "--peers", "3", "--topology", "star"])
        #expect(text.code == 0 && text.stdout.contains("2 of 2 succeeded") && text.stdout.contains("p95"), "\(text.stdout)\(text.stderr)")
    }

    /// A crowd (issue "Crowds"): fifty nodes on one LAN, each with an address of its own, the hub
    /// exchanging with every other by name. Every exchange completes, and no node spends its time
    /// checking the others: not one node sums up a probe (a liveness check is none, and no node checks a
    /// peer no face offers), none was refused for its rate. (A node's load no longer grows with the
    /// crowd, so fifty stand for two hundred here; `make bench GROUPS=crowd` runs 200 and 500.)
    @Test func fiftyNodesExchangeWithTheHubAndNoNodeProbesAnother() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let r = try cli.runBuilt(["simulate", "--peers", "50", "--topology", "star", "--json"])
        #expect(r.code == 0, "\(r.stderr)")
        #expect(r.json["successes"] == 49 && r.json["undiscoveredPeers"] == 0 && r.json["contactsStored"] == 98, "\(r.stdout)")
        #expect((r.json["discoveryMs"]?.doubleValue ?? .infinity) < 30_000, "discovery: \(r.json["discoveryMs"] ?? .null)")
        #expect(r.json["probeSummaries"] == 0 && r.json["refusals"] == 0, "\(r.stdout)")
        #expect(r.json["addresses"] == 50, "each node on an address of its own: \(r.json["addresses"] ?? .null)")
    }

    /// A conference (issue "Crowds"): visitors and a fleet of bots sharing one PostgreSQL book (a
    /// throw-away server the run starts). Every visitor exchanges with a bot it names; the book holds one
    /// contact per visitor. Also without root or namespaces (--no-discovery), where the server runs as
    /// the person who typed it. Nothing is left behind, and --bots sets the pairs itself.
    @Test func aConferenceOfVisitorsAndBotsSharingOneBook() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let servers = { Set((try? FileManager.default.contentsOfDirectory(atPath: "/tmp")) ?? []).filter { $0.hasPrefix("nearcard-sim-pg-") } }
        let before = servers()
        let r = try cli.runBuilt(["simulate", "--peers", "20", "--bots", "3", "--json"])
        #expect(r.code == 0, "\(r.stderr)")
        #expect(r.json["successes"] == 20 && r.json["attempts"] == 20 && r.json["topology"] == "conference", "\(r.stdout)")
        #expect(r.json["fleetContacts"] == 20 && r.json["fleetContactsExpected"] == 20, "one contact per visitor in the fleet's book: \(r.stdout)")
        #expect(r.json["contactsStored"] == 20 && r.json["probeSummaries"] == 0 && r.json["refusals"] == 0, "\(r.stdout)")

        let plain = try cli.run(["simulate", "--peers", "4", "--bots", "2", "--no-discovery"])
        #expect(plain.code == 0, "\(plain.stderr)")
        #expect(plain.stdout.contains("4 contacts, one per visitor (expected 4)") && plain.stdout.contains("a conference with 2 bots"), "\(plain.stdout)")
        #expect(servers() == before, "the run's PostgreSQL servers are gone")

        let both = try cli.run(["simulate", "--peers", "4", "--bots", "2", "--topology", "star"])
        #expect(both.code == 64 && both.stderr.contains("leave out --topology"), "\(both.stderr)")
        let storeOnly = try cli.run(["simulate", "--peers", "4", "--bots-store", "postgres://x@/y"])
        #expect(storeOnly.code == 64 && storeOnly.stderr.contains("--bots N"), "\(storeOnly.stderr)")
    }

    /// --netns: each node in its own namespace with its own avahi-daemon, on a bridge.
    @Test func eachNodeInItsOwnNamespace() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let r = try cli.runBuilt(["simulate", "--peers", "4", "--netns", "--topology", "ring", "--json"])
        #expect(r.code == 0, "\(r.stderr)")
        #expect(r.json["attempts"] == 4 && r.json["successes"] == 4 && r.json["mode"] == "netns" && r.json["contactsStored"] == 8)
    }

    /// Ctrl-C mid-run: exit 130, and every namespace, daemon and node the run made is gone.
    @Test func ctrlCCleansUpEverything() throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-sim-int-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }
        let run = try ChildProcess(CLI.builtExecutable.path, ["simulate", "--peers", "6", "--netns", "--rounds", "500"], log: log)
        var exchanging = false
        for _ in 0..<300 where !exchanging {
            exchanging = ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains("Exchanging:")
            if !exchanging { usleep(50_000) }
        }
        #expect(exchanging, "the simulation did not get to its exchanges")
        #expect(try namespaces(of: run.pid).count == 7, "six nodes and the hub")
        run.kill(SIGINT)
        #expect(run.wait() == 130)
        #expect(try namespaces(of: run.pid).isEmpty)
        let ps = try CLI.run(executable: "/bin/ps", ["-eo", "args"]).stdout
        #expect(!ps.contains("ncs\(run.pid)"), "no daemon of the run is left")
        let text = try String(contentsOf: log, encoding: .utf8)
        #expect(text.contains("Interrupted") && text.contains("are gone"))
    }

    @Test func refusesImpossibleRequests() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        #expect(try cli.run(["simulate", "--peers", "1"]).code == 64)
        #expect(try cli.run(["simulate", "--peers", "3", "--netns", "--no-discovery"]).code == 64)
    }
}
