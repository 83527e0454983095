import Foundation
import NearcardCrypto
import NearcardDiscovery
import NearcardModel
import NearcardProtocol
import NearcardStore
import NIOConcurrencyHelpers

/// Limits on follow-up messages a node accepts (docs/PROTOCOL.md §15).
public struct MailLimits: Sendable, Equatable {
    /// Messages accepted from one contact per minute.
    public var perContactPerMinute = 30
    /// How far in the future a message's `sentAt` may be (clock skew).
    public var maximumFutureSkew: Int64 = ProtocolLimits.maximumClockSkew
    public init() {}
}

/// The recipient's checks on a delivery, and storing it (off the event loop: SQLite blocks).
public struct MailboxAuthority: Sendable {
    let context: NodeContext
    let limits: MailLimits
    private let recent = NIOLockedValueBox<[String: [TimeInterval]]>([:])

    public init(context: NodeContext, limits: MailLimits = MailLimits()) {
        self.context = context
        self.limits = limits
    }

    public enum Outcome: Sendable {
        case stored(InboxItem?)
        case duplicate
        case refused(ProtocolError)
    }

    /// Accepts a delivery only from the contact the token was issued to, proven by both of its pinned
    /// keys, addressed to us, signed, not from the future, within the rate; stores it once.
    public func accept(_ d: MailboxStateMachine.Delivery, now: Date = Date()) -> Outcome {
        let db = context.database
        let refuse = { (code: ProtocolError.Code, why: String) in Outcome.refused(ProtocolError(code, why)) }
        do {
            guard let route = try db.issuedRoute(mailboxToken: d.mailboxToken) else { return refuse(.badIdentity, "unknown mailbox token") }
            guard route.expiresAt > now else { return refuse(.badIdentity, "the mailbox token has expired") }
            guard let contact = try db.contact(did: route.contactDID) else { return refuse(.badIdentity, "the contact this token was for is gone") }
            let e = d.envelope
            guard e.from == route.contactDID else { return refuse(.badIdentity, "the message is not from the contact the token belongs to") }
            guard e.to == context.identity.did else { return refuse(.badIdentity, "the message is addressed to someone else") }
            guard let pinnedStatic = contact.pubKey.flatMap({ try? X25519.PublicKey(rawRepresentation: Base64.decode($0)) }),
                  let pinnedSign = contact.signPubKey.flatMap({ try? Ed25519.PublicKey(rawRepresentation: Base64.decode($0)) }) else {
                return refuse(.badIdentity, "no pinned keys for this contact")
            }
            guard d.senderStatic == pinnedStatic else { return refuse(.badIdentity, "the sender's session key is not the contact's") }
            guard e.isSigned(by: pinnedSign) else { return refuse(.badIdentity, "the message is not signed by the contact's key") }
            guard e.sentAt <= Int64(now.timeIntervalSince1970) + limits.maximumFutureSkew else { return refuse(.protocolError, "the message is dated in the future") }
            let t = now.timeIntervalSince1970
            let allowed = recent.withLockedValue { r -> Bool in
                var times = (r[e.from] ?? []).filter { t - $0 < 60 }
                guard times.count < limits.perContactPerMinute else { r[e.from] = times; return false }
                times.append(t)
                r[e.from] = times
                return true
            }
            guard allowed else { return refuse(.busy, "more than \(limits.perContactPerMinute) messages a minute from this contact") }
            let fresh = try db.storeReceived(e, contactID: contact.id, senderPubKey: d.senderStatic, senderSignPubKey: pinnedSign, at: now)
            guard fresh else { return .duplicate }
            return .stored(try db.inbox(contactDID: e.from).first { $0.id == e.id })
        } catch {
            return refuse(.internalError, "storing the message failed: \(error)")
        }
    }
}

/// Sending a queued message: open the contact's sealed route, find the contact's node (by
/// fingerprint over DNS-SD, then the route's address hints), and deliver over a pinned Noise session.
public struct MailSender: Sendable {
    let context: NodeContext

    public init(context: NodeContext) { self.context = context }

    /// Where and how to reach a contact: from the route it gave us.
    public struct Target: Sendable {
        public let route: RouteRecord
        public let contact: Contact
    }

    public func target(for contact: Contact) throws(NodeError) -> Target {
        guard let sealed = contact.sealedRoute, let did = contact.didPublicKey else {
            throw NodeError(.noRoute, "\(contact.name) gave no sealed route (only contacts from an exchange can be messaged)")
        }
        switch SealedRoute.open(sealed, with: context.keys.x25519, expectedIssuer: did, expectedRecipient: context.identity.did,
                                expectedSignKey: contact.signPubKey.flatMap { try? Ed25519.PublicKey(rawRepresentation: Base64.decode($0)) },
                                now: Int64(Date().timeIntervalSince1970)) {
        case .success(let route): return Target(route: route, contact: contact)
        case .failure(let f): throw NodeError(.noRoute, "cannot use the route \(contact.name) gave: \(f)")
        }
    }

    /// Tries each address in turn; returns on the first delivery (or duplicate acknowledgement).
    public func deliver(_ item: OutboxItem, to target: Target, addresses: [PeerAddress]) async -> Result<Bool, ProtocolError> {
        var last = ProtocolError(.connectionLost, "\(target.contact.name) is not reachable (no address answered)")
        for address in addresses {
            switch await Dialer.deliver(item.envelope, token: target.route.mailboxToken, pinned: target.route.pubKey, at: address, context: context) {
            case .success(let duplicate): return .success(duplicate)
            case .failure(let e):
                last = e
                // The wrong node, or a refusal, will not improve at another address of the same node.
                if e.code != .connectionLost && e.code != .timeout { return .failure(e) }
            }
        }
        return .failure(last)
    }

    /// The addresses to try: what DNS-SD shows for the route's fingerprint now, then its hints.
    public static func addresses(for route: RouteRecord, discovered: [DiscoveredPeer]) -> [PeerAddress] {
        var out: [PeerAddress] = []
        for p in discovered where p.txt.fingerprint == route.fingerprint {
            for a in p.dialOrder where !out.contains(a) { out.append(a) }
        }
        for h in route.hints {
            let a = PeerAddress(ip: h.host, port: h.port, interfaceName: "", interfaceIndex: 0)
            if !out.contains(where: { $0.ip == a.ip && $0.port == a.port }) { out.append(a) }
        }
        return out
    }

    /// When to try again after `attempts` failures: 5 s doubling to 15 minutes; nil (give up) after
    /// 7 days or 200 attempts.
    public static func retryAt(attempts: Int, createdAt: Date, now: Date = Date()) -> Date? {
        if attempts >= 200 || now.timeIntervalSince(createdAt) > 7 * 24 * 3600 { return nil }
        return now.addingTimeInterval(min(900, 5 * pow(2, Double(min(attempts, 10)))))
    }
}
