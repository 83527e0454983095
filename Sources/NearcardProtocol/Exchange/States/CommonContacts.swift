import NearcardCrypto
import NearcardModel

extension ExchangeStateMachine {
    /// The private common-contacts step (§22) between both acceptances and the cards.
    struct CommonContacts: Sendable {
        var session: Identified
        var psi: PSI.Session
        let card: LocalCard
        let message: String?
    }

    /// Both accepted and offered it: the private common-contacts messages before the cards (§22).
    mutating func receiveInCommonContacts(_ c: CommonContacts, frame: [UInt8], now: Int64) throws(ProtocolError) -> [Action] {
        var c = c
        let message = try decrypt(frame, on: &c.session.channel)
        state = .commonContacts(c)
        guard case .psi(let m) = message else { return try unexpected(message) }
        let step = try c.psi.handle(m)
        var actions: [Action] = []
        for out in step.send { actions += try send(.psi(out), on: &c.session.channel) }
        state = .commonContacts(c)
        guard let result = step.result else { return actions }
        let d = Deciding(session: c.session, mine: .sent(message: c.message, card: c.card, prepared: nil), theirsAccepted: true, revealed: true)
        return actions + (try sendCard(d, card: c.card, message: c.message, common: result, now: now))
    }
}
