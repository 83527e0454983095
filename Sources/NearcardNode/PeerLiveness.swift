public import Foundation
internal import NIOConcurrencyHelpers
public import NearcardDiscovery

/// The one liveness rule of every face (the web app's Nearby, `listen`'s and JSON lines' peer events,
/// `peers`): a peer announced on the LAN is shown until the LAN says it left (a goodbye, its records
/// expiring in avahi's cache, a new announcement in its place) or until a TCP connection to it fails.
/// What the LAN says costs nothing; a connection is made only for a peer a face is about to offer or
/// act on (`due`): the Nearby list on an open page, the JSON-lines `peers` reply, `nearcard peers`, a
/// dial by name. Each peer is checked at most once every `recheck` seconds (less a little jitter, so a
/// crowd's checks do not fall together), one that stopped answering less and less often (back-off up
/// to `longestBackoff`), and never more than `maximumInFlight` at once. A node's own checks cost the
/// checked node nothing: a connection closed before its first byte is a check, counted apart from
/// the connections that limit an address (docs/PROTOCOL.md §14).
public final class PeerLiveness: Sendable {
    /// How often a peer shown is checked again while a face offers it.
    public static let recheck: TimeInterval = 20
    /// The most a peer's recheck is brought forward, at random (spreads a crowd's checks).
    static let jitter: TimeInterval = 4
    /// The longest wait between checks of a peer that stopped answering.
    static let longestBackoff: TimeInterval = 300
    /// Checks under way at once, whatever the number of peers.
    public static let maximumInFlight = 4

    struct Entry {
        /// nil: never checked (shown, as the LAN announces it).
        var live: Bool?
        var checkedAt: Date
        var checking = false
        /// Checks failed in a row (the back-off of one that stopped answering).
        var failures = 0
        /// This entry's share of jitter, drawn once.
        let jitter: TimeInterval
    }

    /// What a check changed.
    package enum Change: Equatable { case none, becameLive, becameDead }

    private let state = NIOLockedValueBox<(entries: [String: Entry], inFlight: Int, offeredUntil: Date)>(([:], 0, .distantPast))

    /// How long an offer keeps checks going: each check that ends starts the next one due, so a long
    /// list is swept in turn, four at a time, without waiting for the face to ask again.
    static let offerLasts: TimeInterval = 5

    /// A face is offering the peers now (`NodeRuntime.peersToOffer`).
    package func offered(now: Date = Date()) { state.withLockedValue { $0.offeredUntil = now.addingTimeInterval(Self.offerLasts) } }

    /// Whether a face offered the peers within `offerLasts`.
    package func isOffered(now: Date = Date()) -> Bool { state.withLockedValue { now < $0.offeredUntil } }

    package init() {}

    /// The rule: whether `peer`'s node takes a TCP connection at one of its addresses (within 1 s each).
    public static func answers(_ peer: DiscoveredPeer) async -> Bool { await Reachability.answers(peer) }

    /// Whether the peer announced as `instanceName` answered its last check (nil: not checked yet).
    package func isLive(_ instanceName: String) -> Bool? { state.withLockedValue { $0.entries[instanceName]?.live } }

    /// Whether a face shows the peer: it answered its last check, or was not checked yet.
    package func isShown(_ instanceName: String) -> Bool { isLive(instanceName) != false }

    /// Marks a check of `instanceName` as begun; false when one is already running, it is not due (it
    /// was checked less than its interval ago, and `force` is false), or `maximumInFlight` checks are
    /// under way (the next offer tries again).
    package func begin(_ instanceName: String, now: Date = Date(), force: Bool = false) -> Bool {
        state.withLockedValue { s in
            guard s.inFlight < Self.maximumInFlight else { return false }
            let entry = s.entries[instanceName] ?? Entry(live: nil, checkedAt: .distantPast, jitter: Double.random(in: 0...Self.jitter))
            if entry.checking { return false }
            if !force && now.timeIntervalSince(entry.checkedAt) < Self.interval(entry) { return false }
            var e = entry
            e.checking = true
            s.entries[instanceName] = e
            s.inFlight += 1
            return true
        }
    }

    /// The wait before `entry` is due again: `recheck` less its jitter while it answers; doubling from
    /// `recheck` while it does not.
    static func interval(_ entry: Entry) -> TimeInterval {
        guard entry.failures > 0 else { return recheck - entry.jitter }
        return min(longestBackoff, recheck * pow(2, Double(entry.failures - 1)))
    }

    /// A check's result; says whether the peer became live (it had been found dead) or dead (it had
    /// been shown).
    @discardableResult
    package func record(_ instanceName: String, live: Bool, now: Date = Date()) -> Change {
        state.withLockedValue { s in
            let before = s.entries[instanceName]
            if before?.checking == true { s.inFlight -= 1 }
            let shown = before?.live != false
            s.entries[instanceName] = Entry(
                live: live, checkedAt: now, failures: live ? 0 : (before?.failures ?? 0) + 1,
                jitter: before?.jitter ?? Double.random(in: 0...Self.jitter))
            if live { return shown ? .none : .becameLive }
            return shown ? .becameDead : .none
        }
    }

    /// The peer left discovery, or announced itself anew (a restart: checked again when next offered);
    /// returns whether it was shown.
    @discardableResult
    package func forget(_ instanceName: String) -> Bool {
        state.withLockedValue { s in
            guard let e = s.entries.removeValue(forKey: instanceName) else { return true }
            if e.checking { s.inFlight -= 1 }
            return e.live != false
        }
    }

    /// Checks under way now.
    package var inFlight: Int { state.withLockedValue { $0.inFlight } }
}
