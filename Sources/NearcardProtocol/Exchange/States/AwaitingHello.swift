import NearcardCrypto
import NearcardModel

extension ExchangeStateMachine {
    /// Responder: the initiator's hello (its SAS commitment, and its identity or a request that we prove ourselves).
    mutating func receiveInAwaitingHello(_ channel: EstablishedChannel, frame: [UInt8], now: Int64) throws(ProtocolError) -> [Action] {
        var channel = channel
        let message = try decrypt(frame, on: &channel)
        // On every path below the state is replaced or the exchange fails; keep the advanced cipher.
        state = .awaitingHello(channel)
        guard case .hello(let hello) = message else { return try unexpected(message) }
        // The initiator chose the version (one this node speaks: the hello's decoding checked it).
        version = hello.version
        let h = channel.handshakeHash
        if let identity = hello.identity {
            // Verified now, so a bad identity ends the session before we answer.
            let peer = try verify(identity, channel)
            let invite = hello.invite.map { Invitation.Presented(id: $0.id, proof: $0.proof, handshakeHash: h) }
            let actions = try send(.nonce(sasNonce: sasNonce, sealedIdentity: nil), on: &channel)
            state = .awaitingReveal(channel, peer: peer, commitment: hello.sasCommit, invite: invite, revealed: false)
            return actions
        }
        // "Prove yourself first": our identity, readable only by holders of our presence key.
        let sealed = try Recall.seal(try makeIdentity(channel), presenceKey: presenceKey, handshakeHash: h)
        let actions = try send(.nonce(sasNonce: sasNonce, sealedIdentity: sealed), on: &channel)
        state = .awaitingReveal(channel, peer: nil, commitment: hello.sasCommit, invite: nil, revealed: true)
        return actions
    }
}
