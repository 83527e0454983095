package import Foundation
internal import NIOConcurrencyHelpers
import NearcardCrypto
package import NearcardDiscovery
package import NearcardModel
import NearcardProtocol
import NearcardStore

/// Delivers queued follow-up messages: claims what is due, finds each contact, delivers, and records
/// the outcome (delivered, or retry later with back-off, or failed for good with the reason).
package struct OutboxWorker: Sendable {
    let context: NodeContext
    let sender: MailSender

    package init(context: NodeContext) {
        self.context = context
        self.sender = MailSender(context: context)
    }

    /// One pass over the due messages (of one contact, if given). `ignoringBackoff` also takes
    /// messages whose next attempt is later (the contact has just appeared). Returns them in their new state.
    @discardableResult
    package func deliverDue(peers: [DiscoveredPeer], contactDID: String? = nil, ignoringBackoff: Bool = false, now: Date = Date()) async -> [OutboxItem] {
        let db = context.database
        let horizon = ignoringBackoff ? now.addingTimeInterval(365 * 24 * 3600) : now
        guard let due = try? db.claimDueMessages(now: horizon, leaseFrom: now, contactDID: contactDID, fromDID: context.identity.did), !due.isEmpty else {
            return []
        }
        var results: [OutboxItem] = []
        for item in due {
            let outcome: Result<Bool, ProtocolError>
            do {
                guard let contact = try db.contact(id: item.contactID) else {
                    throw NodeError(.notFound, Phrase("the contact was deleted"))
                }
                let target = try sender.target(for: contact)
                outcome = await sender.deliver(item, to: target, addresses: MailSender.addresses(for: target, discovered: peers))
            } catch {
                outcome = .failure(ProtocolError(.internalError, "\(error)"))
            }
            switch outcome {
            case .success:
                try? db.markDelivered(id: item.id)
            case .failure(let error):
                // A refusal by the contact's own node will not change on its own; unreachable nodes may come
                // back. Someone else answering at the contact's address (identity_mismatch: its key is not
                // the pinned one) costs an attempt, not the message: otherwise anyone on the LAN who
                // answers first could cancel every follow-up to a contact.
                let final = [.badIdentity, .protocolError, .tooLarge].contains(error.code)
                let retry = final ? nil : MailSender.retryAt(attempts: item.attempts + 1, createdAt: item.createdAt, now: now)
                let why = error.code == .identityMismatch ? "another node answered at the contact's address (not their key); trying again later" : error.message
                try? db.markAttemptFailed(id: item.id, error: why, retryAt: retry)
            }
            if let updated = try? db.outboxItem(id: item.id) {
                results.append(updated)
                if updated.state == .delivered { context.events.emit(.messageDelivered(updated)) }
                if updated.state == .failed { context.events.emit(.messageGaveUp(updated)) }
            }
        }
        return results
    }

    /// The contacts with queued messages whose node `peer` is: its presence tag made with their
    /// presence key.
    func contactsWaiting(for peer: DiscoveredPeer) -> [String] {
        guard let tag = peer.txt.tag, let items = try? context.database.outbox() else { return [] }
        var dids: [String] = []
        for item in items where item.state == .queued && !dids.contains(item.contactDID) {
            guard let key = try? context.database.presenceKey(contactDID: item.contactDID), Presence.matches(tag, key: key) else { continue }
            dids.append(item.contactDID)
        }
        return dids
    }

    /// Runs until cancelled: a pass every `interval`; and when a peer appears, at once for the
    /// contacts behind it, whatever their back-off.
    package func run(peers: PeerTable, appeared: AsyncStream<DiscoveredPeer>, interval: TimeInterval = 5) async {
        await withTaskGroup(of: Void.self) { group in
            let (ticks, tick) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
            group.addTask {
                while !Task.isCancelled {
                    tick.yield()
                    try? await Task.sleep(nanoseconds: UInt64(interval * 1_000_000_000))
                }
                tick.finish()
            }
            group.addTask {
                for await peer in appeared {
                    for did in contactsWaiting(for: peer) {
                        await deliverDue(peers: peers.all, contactDID: did, ignoringBackoff: true)
                    }
                }
            }
            group.addTask {
                for await _ in ticks {
                    if Task.isCancelled { break }
                    await deliverDue(peers: peers.all)
                }
            }
            await group.waitForAll()
        }
    }
}
