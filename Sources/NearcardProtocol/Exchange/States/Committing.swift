import NearcardCrypto
import NearcardModel

extension ExchangeStateMachine {
    /// The store is writing the contact: nothing is due from the peer.
    mutating func receiveInCommitting(_ a: AwaitingDone, frame: [UInt8], now: Int64) throws(ProtocolError) -> [Action] {
        var a = a
        // Nothing is due from the peer while we store; its abort is noted, the store goes on (§11).
        let message = try decrypt(frame, on: &a.sent.session.channel)
        state = .committing(a)
        return try unexpected(message)
    }
}
