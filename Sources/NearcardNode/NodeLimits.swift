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

    /// How often connections that ended before their first message (port scans, probes, idle sockets
    /// closed to make room) are summed up in one `connections-probed` event, instead of one line each.
    public var probeSummaryInterval: TimeInterval = 30

    public init() {}

    /// How long each of a session's timers runs (the state machine says which one runs when).
    package func seconds(for timer: SessionTimer) -> TimeInterval {
        switch timer {
        case .handshake: handshakeTimeout
        case .consent: consentTimeout
        case .peerDecision: peerDecisionGrace
        case .cards, .mail: idleTimeout
        }
    }
}

/// The default TCP port of `nearcard listen`.
public let defaultPort = 7447
