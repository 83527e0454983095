/// The timers a session's state machine asks its driver to keep (docs/PROTOCOL.md "Limits"). The machine
/// says which one runs in each state (`Action.arm`); the driver schedules it with the node's duration for
/// that kind and reports it back when it fires (`timerFired`). Arming one replaces the one before.
public enum SessionTimer: String, Sendable, Equatable {
    /// The handshake phase, in total: Noise messages, the hellos, the SAS reveal.
    case handshake
    /// The people (or policies) deciding, and waiting for the peer's decision.
    case consent
    /// After the consent time, when this side has decided: a few seconds more for the peer's own verdict
    /// (its abort, if its person did not decide) to arrive, so that silence is told from a decision.
    case peerDecision
    /// Between frames while the cards go across.
    case cards
    /// A follow-up message's whole session.
    case mail
}
