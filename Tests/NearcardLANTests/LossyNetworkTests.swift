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

    /// The connection is made but the listener's replies are lost for 12 s (every data packet from it
    /// dropped at the dialler, its SYN-ACK and ACKs let through): the handshake runs out before the peer
    /// said who it is — no code shown on either side — so the dial tries again itself, within its
    /// budget, and completes (issue 49).
    @Test func aHandshakeWhoseRepliesAreLostIsTriedAgain() throws {
        let (a, b) = try Lab.pair()
        let ada = try TestPerson(name: "Ada")
        let grace = try TestPerson(name: "Grace")
        defer {
            ada.cli.cleanUp()
            grace.cli.cleanUp()
        }
        _ = try b.listen(home: grace.home, ["--accept", "all", "--no-discovery", "--port", "7465"], log: log("grace"))
        #expect(try a.run(["nft", "add table inet lossy; add chain inet lossy input { type filter hook input priority 0; }"]).code == 0)
        #expect(try a.run(["nft", "add rule inet lossy input tcp sport 7465 meta length > 100 drop"]).code == 0)
        DispatchQueue.global().asyncAfter(deadline: .now() + 12) { _ = try? a.run(["nft", "delete table inet lossy"]) }
        let r = try a.nearcard(["exchange", "\(b.vethIPv4):7465", "--yes", "--json"], home: ada.home)
        #expect(r.code == 0, "\(r.stderr)")
        #expect((r.json["attempts"]?.doubleValue ?? 0) >= 2, "\(r.stdout)")
        #expect(try ada.contacts().count == 1 && grace.contacts().count == 1)
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
