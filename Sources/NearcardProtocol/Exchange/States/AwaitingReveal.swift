import NearcardCrypto
import NearcardModel

extension ExchangeStateMachine {
    /// Responder: the initiator's SAS reveal (and its identity, if it has not shown it); both then know the code.
    mutating func receiveInAwaitingReveal(
        _ channel: EstablishedChannel, _ known: PeerIdentity?, _ commitment: [UInt8], _ invite: Invitation.Presented?, _ revealed: Bool, frame: [UInt8],
        now: Int64
    ) throws(ProtocolError) -> [Action] {
        var channel = channel
        let message = try decrypt(frame, on: &channel)
        state = .awaitingReveal(channel, peer: known, commitment: commitment, invite: invite, revealed: revealed)
        guard case .sasReveal(let nonce, let identity) = message else { return try unexpected(message) }
        guard Sodium.constantTimeEquals(SAS.commitment(handshakeHash: channel.handshakeHash, nonce: nonce), commitment) else {
            throw ProtocolError(.badCommitment, Phrase("the initiator's SAS nonce does not match its commitment"))
        }
        let peer: PeerIdentity
        switch (known, identity) {
        case (let p?, nil): peer = p
        case (nil, let i?): peer = try verify(i, channel)
        case (_?, _?): throw ProtocolError(.protocolError, Phrase("sas-reveal: the initiator showed its identity twice"))
        case (nil, nil): throw ProtocolError(.protocolError, Phrase("sas-reveal: the initiator never showed its identity"))
        }
        let sas = SAS.display(SAS.value(handshakeHash: channel.handshakeHash, initiatorNonce: nonce, responderNonce: sasNonce))
        state = .deciding(
            Deciding(
                session: Identified(channel: channel, peer: peer, sas: sas, invited: invite != nil), mine: .undecided,
                theirsAccepted: false, revealed: revealed))
        return [.arm(.consent), .identified(peer, sas: sas, invite: invite)]
    }
}
