import NearcardCrypto
import NearcardModel

extension ExchangeStateMachine {
    /// Initiator: Noise message 2 arrives; message 3 and our hello leave in one flight.
    mutating func receiveInAwaitingMessage2(_ noise: NoiseXXHandshake, frame: [UInt8], now: Int64) throws(ProtocolError) -> [Action] {
        var noise = noise
        // <- e, ee, s, es; then -> s, se and our hello in the same flight.
        try noise.readEmptyMessage(frame)
        let m3 = try noise.writeMessage()
        var channel = try EstablishedChannel(completed: noise)
        var actions: [Action] = [.send(m3)]
        // A recognised contact proves itself first: our hello then says nothing of us.
        let identity = expected.presenceKey == nil ? try makeIdentity(channel) : nil
        let invite = invitation.map { ExchangeMessage.Invite(id: $0.id, proof: Invitation.proof(secret: $0.secret, handshakeHash: channel.handshakeHash)) }
        actions += try send(
            .hello(
                .init(
                    sasCommit: SAS.commitment(handshakeHash: channel.handshakeHash, nonce: sasNonce),
                    identity: identity, invite: invite, version: version)), on: &channel)
        state = .awaitingNonce(channel)
        return actions
    }
}
