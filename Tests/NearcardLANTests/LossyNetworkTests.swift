import Foundation
import NearcardCrypto
import NearcardSimulation
import NearcardTestSupport
import Testing

/// A network that swallows packets for a while (nftables dropping the listener's port in its namespace):
/// a dial that gets no answer says so and tries again with longer waits, within its budget, instead of
/// failing after one 5 s attempt; a budget spent is "peer unreachable" with the attempts said.
@Suite struct LossyNetworkTests {
    func log(_ name: String) -> URL { FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-\(UUID().uuidString)-\(name).log") }

    /// Drops every packet to `port` in `lab` until `seconds` have passed (forever when nil).
    func swallow(_ lab: Lab, port: Int, for seconds: Double?) throws {
        #expect(try lab.run(["nft", "add table inet lossy; add chain inet lossy input { type filter hook input priority 0; }"]).code == 0)
        #expect(try lab.run(["nft", "add rule inet lossy input tcp dport \(port) drop"]).code == 0)
        if let seconds {
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { _ = try? lab.run(["nft", "delete table inet lossy"]) }
        }
    }

    @Test func aDialThatGetsNoAnswerTriesAgainAndCompletes() throws {
        let (a, b) = try Lab.pair()
        let ada = try TestPerson(name: "Ada")
        let grace = try TestPerson(name: "Grace")
        defer {
            ada.cli.cleanUp()
            grace.cli.cleanUp()
        }
        _ = try b.listen(home: grace.home, ["--accept", "all", "--no-discovery", "--port", "7463"], log: log("grace"))
        try swallow(b, port: 7463, for: 4)
        let seen = try a.nearcard(["exchange", "\(b.vethIPv4):7463", "--yes"], home: ada.home)
        #expect(seen.code == 0, "\(seen.stdout) \(seen.stderr)")
        #expect(seen.stdout.contains("still trying (attempt 2; loss on the network?)"), "\(seen.stdout)")

        try swallow(b, port: 7463, for: 4)
        let quiet = try a.nearcard(["exchange", "\(b.vethIPv4):7463", "--yes", "--json"], home: ada.home)
        #expect(quiet.code == 0, "\(quiet.stderr)")
        #expect((quiet.json["attempts"]?.doubleValue ?? 0) >= 2, "\(quiet.stdout)")
        #expect(quiet.json["name"] == "Grace")
    }

    @Test func aSpentBudgetIsUnreachableWithTheAttemptsSaid() throws {
        let (a, b) = try Lab.pair()
        let ada = try TestPerson(name: "Ada")
        let grace = try TestPerson(name: "Grace")
        defer {
            ada.cli.cleanUp()
            grace.cli.cleanUp()
        }
        _ = try b.listen(home: grace.home, ["--accept", "all", "--no-discovery", "--port", "7464"], log: log("grace"))
        try swallow(b, port: 7464, for: nil)
        let started = Date()
        let r = try a.nearcard(["exchange", "\(b.vethIPv4):7464", "--yes", "--connect-budget", "5"], home: ada.home)
        #expect(r.code == 8, "peer unreachable: \(r.stderr)")
        #expect(r.stderr.contains("attempts in") && r.stderr.contains("no answer within"), "\(r.stderr)")
        #expect(Date().timeIntervalSince(started) >= 4.5, "the budget was used")
        #expect(try grace.contacts().isEmpty)
    }
}
