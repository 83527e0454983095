import NearcardCrypto
import NearcardModel

extension ExchangeStateMachine {
    /// Our card made ahead of the peer's acceptance (`prepareCard`): sent as it is once the peer accepts.
    struct PreparedCard: Sendable {
        let payload: ProximityPayload
        let route: RouteRecord
    }

    struct CardSent: Sendable {
        var session: Identified
        let card: LocalCard
        let myMessage: String?
        let myPayload: ProximityPayload
        let myRoute: RouteRecord
        /// What the common-contacts step found (§22), when it ran before the cards.
        let common: PSI.Result?
    }

    struct Received: Sendable {
        let verified: ProximityPayload.Verified
        let json: JSONValue
        let message: String?
        let sealedRoute: String
        let route: RouteRecord
        let presenceKey: [UInt8]
    }

    /// Our card has gone: the peer's card.
    mutating func receiveInAwaitingCard(_ sent: CardSent, frame: [UInt8], now: Int64) throws(ProtocolError) -> [Action] {
        var sent = sent
        let message = try decrypt(frame, on: &sent.session.channel)
        state = .awaitingCard(sent)
        switch message {
        case .card(let payload, let theirMessage, let theirPresenceKey):
            let received = try verifyCard(payload, message: theirMessage, presenceKey: theirPresenceKey, sent: sent, now: now)
            // The responder says it verified ours; the initiator waits for that before it stores.
            let actions = role == .responder ? try send(.done, on: &sent.session.channel) : []
            state = .awaitingDone(AwaitingDone(sent: sent, received: received))
            return actions
        case .done, .confirm:
            throw ProtocolError(.protocolError, Phrase("the peer said %1$@ before sending its card", message.typeName))
        case .hello, .nonce, .sasReveal, .decision, .abort, .psi:
            return try unexpected(message)
        }
    }
}
