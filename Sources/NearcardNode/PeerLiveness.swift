public import Foundation
internal import NIOConcurrencyHelpers
public import NearcardDiscovery

/// The one liveness rule of every face (the web app's Nearby, `listen`'s and JSON lines' peer events,
/// `peers`): a peer announced on the LAN is shown while its node takes a TCP connection at one of its
/// addresses. An announcement outlives its node — avahi keeps a killed node's records until they
/// expire, and a restarted bot announces a new instance beside the old — so a long-running node checks
/// each peer when it appears and again every `recheck` seconds (one silent connection, which the peer
/// sums up with its probes), and says a peer is found when it first answers and lost when it stops.
public final class PeerLiveness: Sendable {
    /// How often a peer shown is checked again.
    public static let recheck: TimeInterval = 20

    struct Entry {
        var live: Bool
        var checkedAt: Date
        var checking = false
    }

    /// What a check changed.
    package enum Change: Equatable { case none, becameLive, becameDead }

    private let entries = NIOLockedValueBox<[String: Entry]>([:])

    package init() {}

    /// The rule: whether `peer`'s node takes a TCP connection at one of its addresses (within 1 s each).
    public static func answers(_ peer: DiscoveredPeer) async -> Bool { await Reachability.answers(peer) }

    /// Whether the peer announced as `instanceName` answered its last check (nil: not checked yet).
    package func isLive(_ instanceName: String) -> Bool? { entries.withLockedValue { $0[instanceName]?.live } }

    /// Marks a check of `instanceName` as begun; false when one is already running or it was checked
    /// less than `recheck` ago (and `force` is false).
    package func begin(_ instanceName: String, now: Date = Date(), force: Bool = false) -> Bool {
        entries.withLockedValue { e in
            if let entry = e[instanceName] {
                if entry.checking || (!force && now.timeIntervalSince(entry.checkedAt) < Self.recheck) { return false }
                e[instanceName]?.checking = true
                return true
            }
            e[instanceName] = Entry(live: false, checkedAt: .distantPast, checking: true)
            return true
        }
    }

    /// A check's result; says whether the peer became live or dead by it. The first check of a peer
    /// that does not answer is `becameDead` only if it had been live.
    @discardableResult
    package func record(_ instanceName: String, live: Bool, now: Date = Date()) -> Change {
        entries.withLockedValue { e in
            let was = e[instanceName].map { $0.live && $0.checkedAt != .distantPast } ?? false
            e[instanceName] = Entry(live: live, checkedAt: now)
            return live == was ? .none : live ? .becameLive : .becameDead
        }
    }

    /// The peer left discovery; returns whether it was shown (live).
    @discardableResult
    package func forget(_ instanceName: String) -> Bool {
        entries.withLockedValue { $0.removeValue(forKey: instanceName)?.live ?? false }
    }
}
