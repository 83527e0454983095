import NearcardCrypto
import NearcardModel

extension ExchangeStateMachine {
    /// Initiator: the responder's decision, with its identity when it accepts.
    mutating func receiveInAwaitingResponder(_ channel: EstablishedChannel, _ sas: String, _ past: Bool, frame: [UInt8], now: Int64) throws(ProtocolError)
        -> [Action]
    {
        var channel = channel
        let message = try decrypt(frame, on: &channel)
        state = .awaitingResponder(channel, sas: sas, waitingPastConsent: past)
        guard case .decision(let accept, let reason, let identity, let offered) = message else { return try unexpected(message) }
        guard accept else {
            state = .failed
            return [.failed(ProtocolError(.declined, ExchangeStateMachine.peerDeclinedPhrase(reason)), byPeer: true)]
        }
        guard let identity else { throw ProtocolError(.protocolError, Phrase("decision: the responder accepted without showing its identity")) }
        let peer = try verify(identity, channel)
        // The consent time runs on (a total): no new timer, unless the grace had begun.
        state = .deciding(
            Deciding(
                session: Identified(channel: channel, peer: peer, sas: sas, invited: invitation != nil), mine: .undecided,
                theirsAccepted: true, revealed: true, theirsOffered: offered))
        return (past ? [.arm(.consent)] : []) + [.identified(peer, sas: sas, invite: nil)]
    }
}
