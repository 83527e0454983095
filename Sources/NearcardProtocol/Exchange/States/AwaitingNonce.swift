import NearcardCrypto
import NearcardModel

extension ExchangeStateMachine {
    /// Initiator: the responder's nonce (and its sealed identity, when we recognised it as a contact).
    mutating func receiveInAwaitingNonce(_ channel: EstablishedChannel, frame: [UInt8], now: Int64) throws(ProtocolError) -> [Action] {
        var channel = channel
        let message = try decrypt(frame, on: &channel)
        state = .awaitingNonce(channel)
        guard case .nonce(let theirNonce, let sealed) = message else { return try unexpected(message) }
        let sas = SAS.display(SAS.value(handshakeHash: channel.handshakeHash, initiatorNonce: sasNonce, responderNonce: theirNonce))
        guard let key = expected.presenceKey else {
            guard sealed == nil else { throw ProtocolError(.protocolError, Phrase("nonce: a sealed identity nobody asked for")) }
            var actions = try send(.sasReveal(nonce: sasNonce, identity: nil), on: &channel)
            state = .awaitingResponder(channel, sas: sas, waitingPastConsent: false)
            actions += [.arm(.consent), .sasKnown(sas)]
            return actions
        }
        guard let sealed else {
            throw ProtocolError(
                .identityMismatch,
                expected.did.map { Phrase("the node answering did not prove itself as %1$@, whom we recognised", $0) }
                    ?? Phrase("the node answering did not prove itself as the contact, whom we recognised"))
        }
        guard let identity = try Recall.open(sealed, presenceKey: key, handshakeHash: channel.handshakeHash) else {
            throw ProtocolError(
                .identityMismatch,
                expected.did.map {
                    Phrase("the node answering is not %1$@, whom we recognised (its proof does not open with that contact's presence key)", $0)
                }
                    ?? Phrase("the node answering is not the contact, whom we recognised (its proof does not open with that contact's presence key)"))
        }
        let peer = try verify(identity, channel)
        var actions = try send(.sasReveal(nonce: sasNonce, identity: try makeIdentity(channel)), on: &channel)
        state = .deciding(
            Deciding(
                session: Identified(channel: channel, peer: peer, sas: sas, invited: false), mine: .undecided,
                theirsAccepted: false, revealed: true))
        actions += [.arm(.consent), .identified(peer, sas: sas, invite: nil)]
        return actions
    }
}
