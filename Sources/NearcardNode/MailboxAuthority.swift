package import Foundation
internal import NIOConcurrencyHelpers
package import NearcardCrypto
import NearcardDiscovery
package import NearcardModel
package import NearcardProtocol
import NearcardStore

/// The recipient's checks on a delivery, and storing it (off the event loop: SQLite blocks).
package struct MailboxAuthority: Sendable {
    let context: NodeContext
    let limits: MailLimits
    private let recent = NIOLockedValueBox<[String: [TimeInterval]]>([:])

    package init(context: NodeContext, limits: MailLimits = MailLimits()) {
        self.context = context
        self.limits = limits
    }

    package enum Outcome: Sendable {
        case stored(InboxItem?)
        case duplicate
        case refused(ProtocolError)
    }

    /// A contact's confirmation query (§11): held when this node keeps the holder of `sender` (the
    /// contact's pinned X25519 key) as a contact; an exchange it does not hold is remembered as
    /// withdrawn first, so a late `done` for it stores nothing.
    package func answerConfirmation(edge: String, from sender: X25519.PublicKey, now: Date = Date()) -> Result<Bool, ProtocolError> {
        do {
            return .success(try context.database.answerConfirmation(edge: edge, pubKey: Base64.encode(sender.rawRepresentation), now: now))
        } catch {
            return .failure(ProtocolError(.internalError, "the confirmation query cannot be answered: \(error.message)"))
        }
    }

    /// Accepts a delivery only from the contact the token was issued to, proven by both of its pinned
    /// keys, addressed to us, signed, not from the future, within the rate; stores it once.
    package func accept(_ d: MailboxStateMachine.Delivery, now: Date = Date()) -> Outcome {
        let db = context.database
        let refuse = { (code: ProtocolErrorCode, why: String) in Outcome.refused(ProtocolError(code, why)) }
        do {
            guard let route = try db.issuedRoute(mailboxToken: d.mailboxToken) else { return refuse(.badIdentity, "unknown mailbox token") }
            guard route.expiresAt > now else { return refuse(.badIdentity, "the mailbox token has expired") }
            guard let contact = try db.contact(did: route.contactDID) else { return refuse(.badIdentity, "the contact this token was for is gone") }
            let e = d.envelope
            guard e.from == route.contactDID else { return refuse(.badIdentity, "the message is not from the contact the token belongs to") }
            guard e.to == context.identity.did else { return refuse(.badIdentity, "the message is addressed to someone else") }
            guard let pinnedStatic = contact.pubKey.flatMap({ try? X25519.PublicKey(rawRepresentation: Base64.decode($0)) }),
                let pinnedSign = contact.signPubKey.flatMap({ try? Ed25519.PublicKey(rawRepresentation: Base64.decode($0)) })
            else {
                return refuse(.badIdentity, "no pinned keys for this contact")
            }
            guard d.senderStatic == pinnedStatic else { return refuse(.badIdentity, "the sender's session key is not the contact's") }
            guard e.isSigned(by: pinnedSign) else { return refuse(.badIdentity, "the message is not signed by the contact's key") }
            guard e.sentAt <= Int64(now.timeIntervalSince1970) + limits.maximumFutureSkew else {
                return refuse(.protocolError, "the message is dated in the future")
            }
            let t = now.timeIntervalSince1970
            let allowed = recent.withLockedValue { r -> Bool in
                var times = (r[e.from] ?? []).filter { t - $0 < 60 }
                guard times.count < limits.perContactPerMinute else {
                    r[e.from] = times
                    return false
                }
                times.append(t)
                r[e.from] = times
                return true
            }
            guard allowed else { return refuse(.busy, "more than \(limits.perContactPerMinute) messages a minute from this contact") }
            if TestFault.has(.holdMessages) { return refuse(.busy, "the test fault holds every message") }
            // Already past its lifetime (it waited in the sender's outbox): acknowledged, not kept (§15).
            if e.hasExpired(now: Int64(t)) { return .stored(nil) }
            let fresh = try db.storeReceived(e, contactID: contact.id, senderPubKey: d.senderStatic, senderSignPubKey: pinnedSign, at: now)
            guard fresh else { return .duplicate }
            return .stored(try db.inbox(contactDID: e.from).first { $0.id == e.id })
        } catch {
            return refuse(.internalError, "storing the message failed: \(error)")
        }
    }
}
