public import Foundation
package import NearcardProtocol

/// Every wait has a timeout and every peer a limit (docs/PROTOCOL.md "Limits", docs/SECURITY.md).
public struct NodeLimits: Sendable, Equatable {
    /// From TCP connect to the SAS being shown (handshake, hello, reveal).
    package var handshakeTimeout: TimeInterval = 10
    /// How long a person (or policy) has to decide, and how long we wait for the peer's decision.
    public var consentTimeout: TimeInterval = 60
    /// When this side decided and the peer's decision has not come at the end of the consent time: how
    /// much longer to wait for the peer's own verdict before calling it a timeout (an outage).
    package var peerDecisionGrace: TimeInterval = 5
    /// How long a dial keeps trying to connect, in all (rounds of attempts with longer timeouts).
    public var connectBudget: TimeInterval = 30
    /// Between frames once cards are being exchanged.
    package var idleTimeout: TimeInterval = 30
    /// A whole session, whatever happens.
    package var sessionTimeout: TimeInterval = 300
    /// Sessions open at once on a listening node.
    public var maximumSessions = 256
    /// Sessions open at once from one address.
    public var maximumSessionsPerAddress = 8
    /// New connections per address per minute.
    public var connectionsPerAddressPerMinute = 120
    /// Liveness checks per address per minute, counted apart (docs/PROTOCOL.md §14): a connection the
    /// peer closes before sending a byte, within `checkWindow` of its opening, is another node asking
    /// whether this one answers. Within this budget it is given back to the address's connection rate and
    /// is no probe; past it, it counts as any connection does.
    public var checksPerAddressPerMinute = 600
    /// How soon after its opening a connection closed without a byte still counts as a check.
    public var checkWindow: TimeInterval = 2
    /// On a node at least half full: how long a connection may stay without completing the handshake
    /// (Noise message 3) before it is closed to make room (docs/PROTOCOL.md §14). An idle node gives a
    /// slow link the whole handshake time.
    public var identifyTimeoutWhenCrowded: TimeInterval = 5

    /// How often connections that ended before their first message (port scans, probes, idle sockets
    /// closed to make room) are summed up in one `connections-probed` event, instead of one line each.
    public var probeSummaryInterval: TimeInterval = 30

    public init() {}

    /// The largest round trip deadlines stretch for (docs/PROTOCOL.md §12): a link slower than this
    /// is given this much, so a peer cannot hold a session open longer by answering slowly at first.
    public var maximumRoundTrip: TimeInterval = 10

    /// How long each of a session's timers runs (the state machine says which one runs when): its base
    /// time, plus the round trips the phase must fit at the round trip measured on this connection
    /// (`roundTrip`, at most `maximumRoundTrip`; nil or 0 before one is known). docs/PROTOCOL.md §12.
    package func seconds(for timer: SessionTimer, roundTrip: TimeInterval? = nil) -> TimeInterval {
        let rtt = min(max(roundTrip ?? 0, 0), maximumRoundTrip)
        return switch timer {
        case .handshake: handshakeTimeout + Self.roundTrips(in: timer) * rtt
        case .consent: consentTimeout + Self.roundTrips(in: timer) * rtt
        case .peerDecision: peerDecisionGrace + Self.roundTrips(in: timer) * rtt
        case .cards, .mail: idleTimeout + Self.roundTrips(in: timer) * rtt
        }
    }

    /// The round trips a phase must fit beyond its base time: the handshake's three (Noise messages 2
    /// and 3 with the hellos, the nonce and its reveal) and one to spare; a decision's journey; the
    /// cards' and their confirmation; a follow-up's handshake and delivery.
    static func roundTrips(in timer: SessionTimer) -> Double {
        switch timer {
        case .handshake: 4
        case .consent, .peerDecision: 2
        case .cards: 2
        case .mail: 4
        }
    }
}

/// The default TCP port of `nearcard listen`.
public let defaultPort = 7447
