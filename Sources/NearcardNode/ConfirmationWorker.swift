package import Foundation
package import NearcardDiscovery
import NearcardModel
import NearcardProtocol
import NearcardStore

/// Settles exchanges this node stored unconfirmed (docs/PROTOCOL.md §11): asks each peer's node over
/// the mail channel whether it holds the exchange, then confirms or withdraws it here. Retries on the
/// outbox's schedule (5 s doubling to 15 minutes); never gives up on its own — an unconfirmed contact
/// stays marked as such until the peer answers.
package struct ConfirmationWorker: Sendable {
    let context: NodeContext
    let sender: MailSender

    package init(context: NodeContext) {
        self.context = context
        self.sender = MailSender(context: context)
    }

    /// How one query ended.
    package enum Settled: Sendable, Equatable {
        case confirmed(did: String)
        /// The peer does not hold it: undone here (`deletedContact`: it was new with that exchange).
        case withdrawn(did: String, deletedContact: Bool)
        /// Not settled yet (unreachable, or refused): asked again later.
        case pending(did: String, reason: String)
    }

    /// One pass over the queries due (or every one, with `ignoringBackoff`).
    @discardableResult
    package func settleDue(peers: [DiscoveredPeer], ignoringBackoff: Bool = false, now: Date = Date()) async -> [Settled] {
        let db = context.database
        guard let due = try? db.pendingConfirmations(due: ignoringBackoff ? nil : now), !due.isEmpty else { return [] }
        var out: [Settled] = []
        for p in due {
            // The name as it was: a withdrawn contact that was new with the exchange is gone after.
            let name = (try? db.contact(did: p.contactDID))?.name ?? p.contactDID
            let settled = await settle(p, peers: peers, now: now)
            switch settled {
            case .confirmed(let did): context.events.emit(.exchangeSettled(did: did, name: name, kept: true))
            case .withdrawn(let did, _): context.events.emit(.exchangeSettled(did: did, name: name, kept: false))
            case .pending: break
            }
            out.append(settled)
        }
        return out
    }

    func settle(_ p: NearcardDatabase.PendingConfirmation, peers: [DiscoveredPeer], now: Date) async -> Settled {
        let db = context.database
        let answer: Result<Bool, ProtocolError>
        do {
            guard let contact = try db.contact(did: p.contactDID) else {
                // Deleted here meanwhile: nothing is left to confirm.
                try db.confirmExchange(edge: p.edge)
                return .confirmed(did: p.contactDID)
            }
            let target = try sender.target(for: contact)
            answer = await sender.ask(about: p.edge, target: target, addresses: MailSender.addresses(for: target, discovered: peers))
        } catch {
            answer = .failure(ProtocolError(.internalError, "\(error)"))
        }
        switch answer {
        case .success(true):
            _ = try? db.confirmExchange(edge: p.edge)
            return .confirmed(did: p.contactDID)
        case .success(false):
            let deleted = (try? db.withdrawExchange(edge: p.edge)) ?? nil
            return .withdrawn(did: p.contactDID, deletedContact: deleted != nil)
        case .failure(let error):
            let next = MailSender.retryAt(attempts: p.attempts + 1, createdAt: now, now: now) ?? now.addingTimeInterval(900)
            try? db.postponeConfirmation(edge: p.edge, error: error.message, next: next)
            return .pending(did: p.contactDID, reason: error.message)
        }
    }
}
