import NearcardCrypto
import NearcardModel

extension ExchangeStateMachine {
    struct AwaitingDone: Sendable {
        var sent: CardSent
        let received: Received
    }

    /// Both cards verified: the peer's done.
    mutating func receiveInAwaitingDone(_ a: AwaitingDone, frame: [UInt8], now: Int64) throws(ProtocolError) -> [Action] {
        var a = a
        let message = try decrypt(frame, on: &a.sent.session.channel)
        state = .awaitingDone(a)
        guard case .done = message else { return try unexpected(message) }
        state = .committing(a)
        return [.commit(outcome(a, now: now), confirmed: role == .responder)]
    }
}
