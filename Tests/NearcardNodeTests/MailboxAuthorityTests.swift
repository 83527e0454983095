import Foundation
import NearcardCrypto
import NearcardModel
import NearcardNode
import NearcardProtocol
import NearcardStore
import Testing

/// The recipient's checks on a delivery, against a real database.
struct Recipient {
    let keys = IdentityKeys.generate()
    let db: NearcardDatabase
    let dir: String
    let context: NodeContext
    let authority: MailboxAuthority

    init(limits: MailLimits = MailLimits()) throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-mb-\(UUID().uuidString)").path
        db = try NearcardDatabase(path: dir + "/nearcard.sqlite")
        context = NodeContext(keys: keys, identity: keys.publicIdentity(name: "Grace"), database: db, consent: DeclineAll(reason: "test"))
        authority = MailboxAuthority(context: context, limits: limits)
    }

    /// A contact (as after an exchange) and the token we issued to it.
    func contact(_ sender: IdentityKeys, expires: Date = Date().addingTimeInterval(3600)) throws -> [UInt8] {
        let did = sender.publicIdentity(name: nil).did
        let c = Contact(
            card: Card(name: "Ada"), source: .proximity, verificationStatus: .verified, receivedAt: Date(),
            pubKey: Base64.encode(sender.x25519.publicKey.rawRepresentation),
            signPubKey: Base64.encode(sender.ed25519.publicKey.rawRepresentation), didPublicKey: did)
        let token = Sodium.randomBytes(32)
        try db.recordExchange(c, issuedRoute: IssuedRoute(mailboxToken: token, contactDID: did, issuedAt: Date(), expiresAt: expires), payloadJSON: "{}")
        return token
    }

    func delivery(
        _ sender: IdentityKeys, token: [UInt8], text: String = "hi", to: String? = nil, signer: Ed25519.PrivateKey? = nil,
        staticKey: X25519.PublicKey? = nil, sentAt: Int64 = Int64(Date().timeIntervalSince1970)
    ) -> MailboxStateMachine.Delivery {
        let e = MessageEnvelope.make(
            text: text, from: sender.publicIdentity(name: nil).did, to: to ?? keys.publicIdentity(name: nil).did,
            sentAt: sentAt, signer: signer ?? sender.ed25519)
        return MailboxStateMachine.Delivery(mailboxToken: token, envelope: e, senderStatic: staticKey ?? sender.x25519.publicKey)
    }

    func cleanUp() { try? FileManager.default.removeItem(atPath: dir) }
}

func refusal(_ o: MailboxAuthority.Outcome) -> ProtocolError? {
    if case .refused(let e) = o { return e }
    return nil
}

@Suite struct MailboxAuthorityTests {
    @Test func acceptsTheContactAndDeDuplicates() throws {
        let r = try Recipient()
        defer { r.cleanUp() }
        let ada = IdentityKeys.generate()
        let token = try r.contact(ada)
        let d = r.delivery(ada, token: token, text: "Hello Grace")
        guard case .stored(let item) = r.authority.accept(d) else {
            Issue.record("not stored")
            return
        }
        #expect(item?.text == "Hello Grace" && item?.keysMatched == true && item?.contactName == "Ada")
        guard case .duplicate = r.authority.accept(d) else {
            Issue.record("a re-sent message must be a duplicate")
            return
        }
        #expect(try r.db.inbox().count == 1, "stored once")
    }

    @Test func refusesStrangersForgeriesAndExpiredTokens() throws {
        let r = try Recipient()
        defer { r.cleanUp() }
        let ada = IdentityKeys.generate()
        let mallory = IdentityKeys.generate()
        let token = try r.contact(ada)
        // A stranger with a made-up token.
        #expect(refusal(r.authority.accept(r.delivery(mallory, token: Sodium.randomBytes(32))))?.message == "unknown mailbox token")
        // A stranger who learnt Ada's token: its session key and signature are not Ada's.
        #expect(refusal(r.authority.accept(r.delivery(mallory, token: token)))?.code == .badIdentity)
        // Ada's token and Ada's session key, but signed by another key.
        #expect(refusal(r.authority.accept(r.delivery(ada, token: token, signer: mallory.ed25519)))?.message.contains("not signed") == true)
        // Ada's signature but a session from another device key.
        #expect(refusal(r.authority.accept(r.delivery(ada, token: token, staticKey: mallory.x25519.publicKey)))?.message.contains("session key") == true)
        // Addressed to someone else.
        #expect(refusal(r.authority.accept(r.delivery(ada, token: token, to: mallory.publicIdentity(name: nil).did)))?.message.contains("someone else") == true)
        // Dated in the future.
        #expect(refusal(r.authority.accept(r.delivery(ada, token: token, sentAt: Int64(Date().timeIntervalSince1970) + 3600))) != nil)
        // An expired token.
        let old = IdentityKeys.generate()
        let expired = try r.contact(old, expires: Date().addingTimeInterval(-1))
        #expect(refusal(r.authority.accept(r.delivery(old, token: expired)))?.message.contains("expired") == true)
        #expect(try r.db.inbox().isEmpty, "nothing refused was stored")
    }

    @Test func ratePerContact() throws {
        var limits = MailLimits()
        limits.perContactPerMinute = 3
        let r = try Recipient(limits: limits)
        defer { r.cleanUp() }
        let ada = IdentityKeys.generate()
        let token = try r.contact(ada)
        for i in 0..<3 {
            guard case .stored = r.authority.accept(r.delivery(ada, token: token, text: "m\(i)")) else {
                Issue.record("message \(i) refused")
                return
            }
        }
        #expect(refusal(r.authority.accept(r.delivery(ada, token: token, text: "m3")))?.code == .busy)
    }

    /// The inbox says when a message arrived with keys that are no longer the contact's.
    @Test func keysMatchedReflectsTheContactsCurrentKeys() throws {
        let r = try Recipient()
        defer { r.cleanUp() }
        let ada = IdentityKeys.generate()
        let token = try r.contact(ada)
        _ = r.authority.accept(r.delivery(ada, token: token))
        var c = try #require(try r.db.contact(did: ada.publicIdentity(name: nil).did))
        c.pubKey = Base64.encode(X25519.PrivateKey().publicKey.rawRepresentation)
        try r.db.recordContact(c, payloadJSON: nil)
        #expect(try r.db.inbox().first?.keysMatched == false)
    }
}

@Suite struct OutboxStoreTests {
    @Test func claimLeaseRetryAndDeliver() throws {
        let r = try Recipient()
        defer { r.cleanUp() }
        let grace = IdentityKeys.generate()
        _ = try r.contact(grace)
        let contact = try #require(try r.db.contact(did: grace.publicIdentity(name: nil).did))
        let e = MessageEnvelope.make(
            text: "queued", from: r.keys.publicIdentity(name: nil).did, to: grace.publicIdentity(name: nil).did, sentAt: 1, signer: r.keys.ed25519)
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        try r.db.enqueue(e, for: contact, now: t0)
        #expect(try r.db.claimDueMessages(now: t0).count == 1)
        #expect(try r.db.claimDueMessages(now: t0.addingTimeInterval(30)).isEmpty, "leased")
        #expect(try r.db.claimDueMessages(now: t0.addingTimeInterval(61)).count == 1, "the lease lapses (a crashed sender)")
        try r.db.markAttemptFailed(id: e.id, error: "connection refused", retryAt: t0.addingTimeInterval(100))
        #expect(try r.db.claimDueMessages(now: t0.addingTimeInterval(99)).isEmpty, "backing off")
        #expect(try r.db.outbox().first?.lastError == "connection refused")
        #expect(try r.db.claimDueMessages(now: t0.addingTimeInterval(100)).count == 1)
        try r.db.markDelivered(id: e.id, at: t0.addingTimeInterval(101))
        #expect(try r.db.outbox().isEmpty)
        #expect(try r.db.outbox(all: true).first?.state == .delivered)
    }

    @Test func backOffAndGivingUp() {
        let created = Date(timeIntervalSince1970: 0)
        #expect(
            MailSender.retryAt(attempts: 1, createdAt: created, now: created)! == created.addingTimeInterval(5),
            "§15: the first retry 5 s after the first failure")
        #expect(MailSender.retryAt(attempts: 2, createdAt: created, now: created)! == created.addingTimeInterval(10))
        #expect(MailSender.retryAt(attempts: 9, createdAt: created, now: created)! == created.addingTimeInterval(900))
        #expect(MailSender.retryAt(attempts: 3, createdAt: created, now: created.addingTimeInterval(8 * 24 * 3600)) == nil)
        #expect(MailSender.retryAt(attempts: 200, createdAt: created, now: created) == nil)
    }
}
