import NearcardCrypto
import NearcardModel

extension ExchangeStateMachine {
    /// This side's decision, and whether it has gone to the peer. An acceptance waits for this side's
    /// card before it is sent, so the peer's card can never arrive before ours exists.
    enum MyDecision: Sendable {
        case undecided
        case waitingForCard(message: String?)
        case sent(message: String?, card: LocalCard, prepared: PreparedCard?)
    }

    struct Deciding: Sendable {
        var session: Identified
        var mine: MyDecision
        /// The peer accepted (a refusal ends the exchange).
        var theirsAccepted: Bool
        /// Responder: our identity has gone to the peer (sealed to a contact); else it goes with our acceptance.
        var revealed: Bool
        /// The peer's acceptance offered the common-contacts step (§22).
        var theirsOffered = false
        /// Our person or policy has not answered yet.
        var isUndecided: Bool { if case .undecided = mine { true } else { false } }
        /// The consent time ran out after we decided: the grace for the peer's verdict runs.
        var waitingPastConsent = false
        /// Our acceptance does not offer the common-contacts step with this peer (its rate, §22.3;
        /// the node's word once it knows the peer, `withholdCommonContacts`).
        var commonContactsWithheld = false
    }

    /// Both sides know each other and the code: the peer's decision while ours may still be pending.
    mutating func receiveInDeciding(_ d: Deciding, frame: [UInt8], now: Int64) throws(ProtocolError) -> [Action] {
        var d = d
        let message = try decrypt(frame, on: &d.session.channel)
        state = .deciding(d)
        guard case .decision(let accept, let reason, let identity, let offered) = message, !d.theirsAccepted else { return try unexpected(message) }
        // A stranger's initiator cannot know whom it accepts before our acceptance showed us (§6).
        if role == .responder && !d.revealed {
            throw ProtocolError(.protocolError, Phrase("the initiator decided before this side accepted and showed itself"))
        }
        guard accept else {
            state = .failed
            return [.failed(ProtocolError(.declined, ExchangeStateMachine.peerDeclinedPhrase(reason)), byPeer: true)]
        }
        guard identity == nil else { throw ProtocolError(.protocolError, Phrase("decision: an identity the peer had already shown")) }
        d.theirsAccepted = true
        d.theirsOffered = offered
        state = .deciding(d)
        guard case .sent(let myMessage, let card, let prepared) = d.mine else { return [] }
        return try sendCard(d, card: card, message: myMessage, prepared: prepared, now: now)
    }
}
