import Foundation
import NearcardCrypto
import NearcardModel
import NearcardProcess
import NearcardSimulation
import NearcardStore
import NearcardTestSupport
import Testing

/// A delivered message keeps its metadata and drops its text: once the contact's node has
/// acknowledged it, the sender's store shows whom it went to and when, never what it said.
@Suite struct DeliveredMessageTests {
    let did = "did:key:zDnaeGraceHopperDelivered000000000000000000000000000"

    func queue(_ text: String, in db: NearcardDatabase, at: Date = Date()) throws -> (MessageEnvelope, Contact) {
        let grace = try db.recordContact(proximityContact(did: did, name: "Grace Hopper", message: "hi"), payloadJSON: "{}")
        let envelope = MessageEnvelope.make(text: text, from: "did:key:zMe", to: did, sentAt: Int64(at.timeIntervalSince1970), signer: Ed25519.PrivateKey())
        try db.enqueue(envelope, for: grace, now: at)
        return (envelope, grace)
    }

    func bytes(of db: NearcardDatabase) -> [(String, Data)] {
        [db.path, db.path + "-wal", db.path + "-shm"].map { ($0, (try? Data(contentsOf: URL(fileURLWithPath: $0))) ?? Data()) }
    }

    /// The text, and the signature that would confirm a guess of it, are in no byte of the database, its
    /// WAL or its SHM once the message is marked delivered; a message still queued keeps its text.
    @Test func aDeliveredMessagesTextIsInNoByteOfTheDatabase() throws {
        let (db, dir) = try temporaryDatabase(.sqlite)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (sent, grace) = try queue("delivered-marker-5772 meet at the fountain", in: db)
        let waiting = MessageEnvelope.make(text: "queued-marker-1414", from: "did:key:zMe", to: did, sentAt: 1_700_000_000, signer: Ed25519.PrivateKey())
        try db.enqueue(waiting, for: grace)
        #expect(try db.claimDueMessages().count == 2)
        #expect(bytes(of: db).contains { $0.1.range(of: Data("delivered-marker-5772".utf8)) != nil }, "the text is stored while it waits")

        try db.markDelivered(id: sent.id)
        let signature = Base64.encode(sent.signature)
        for (file, data) in bytes(of: db) {
            for marker in ["delivered-marker-5772", signature] {
                #expect(data.range(of: Data(marker.utf8)) == nil, "\(marker) is still in \(URL(fileURLWithPath: file).lastPathComponent)")
            }
        }
        // The other message still waits, with its text.
        #expect(try db.outbox().map(\.text) == ["queued-marker-1414"])
        #expect(try db.outboxItem(id: waiting.id)?.envelope == waiting)
    }

    /// What stays: id, recipient, times, attempts and state. `text` is nil (null in JSON, the member
    /// kept); the message is never claimed again, and a late failure report of another sender does not
    /// turn it back.
    @Test(arguments: Backend.allCases) func aDeliveredMessageKeepsItsMetadataAndIsNeverSentAgain(_ backend: Backend) throws {
        let (db, dir) = try temporaryDatabase(backend)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        let (sent, grace) = try queue("see you at four", in: db, at: t0)
        #expect(try db.outboxItem(id: sent.id)?.text == "see you at four")
        #expect(try db.claimDueMessages(now: t0).map(\.id) == [sent.id])
        try db.markDelivered(id: sent.id, at: t0.addingTimeInterval(7))

        let item = try #require(try db.outboxItem(id: sent.id))
        #expect(item.text == nil)
        #expect(item.id == sent.id && item.contactID == grace.id && item.contactDID == did && item.contactName == "Grace Hopper")
        #expect(item.state == .delivered && item.attempts == 1)
        #expect(item.createdAt == t0 && item.deliveredAt == t0.addingTimeInterval(7))
        #expect(item.envelope.id == sent.id && item.envelope.to == did && item.envelope.text.isEmpty && item.envelope.signature.isEmpty)
        let json = try #require(item.json.objectValue)
        #expect(json["text"] == .null && json.keys.contains("text"), "the member stays, null")
        #expect(
            json["id"]?.stringValue == sent.id && json["state"] == "delivered" && json["deliveredAt"]?.stringValue == ISO8601.string(t0.addingTimeInterval(7)))
        #expect(try db.outbox(all: true).map(\.id) == [sent.id] && db.outbox().isEmpty)

        #expect(try db.claimDueMessages(now: t0.addingTimeInterval(3600)).isEmpty, "a delivered message is never claimed again")
        try db.markAttemptFailed(id: sent.id, error: "unreachable", retryAt: nil)
        try db.markDelivered(id: sent.id, at: t0.addingTimeInterval(99))
        let after = try #require(try db.outboxItem(id: sent.id))
        #expect(after.state == .delivered && after.attempts == 1 && after.lastError == nil && after.deliveredAt == t0.addingTimeInterval(7))
    }

    /// Even set back to queued by hand (as a test simulating a lost acknowledgement might), a message
    /// without its text is listed, not sent: it is never claimed.
    @Test func aMessageWithoutItsTextIsNeverClaimedAgain() throws {
        let (db, dir) = try temporaryDatabase(.sqlite)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (sent, _) = try queue("once only", in: db)
        try db.markDelivered(id: sent.id)
        let requeue = try ChildProcess.capture(
            ["/usr/bin/sqlite3", db.path, "UPDATE outboxMessage SET state = 'queued', nextAttemptAt = 0"],
            environment: ProcessInfo.processInfo.environment)
        #expect(requeue.code == 0, "\(String(decoding: requeue.stderr, as: UTF8.self))")
        #expect(try db.claimDueMessages(now: Date().addingTimeInterval(3600)).isEmpty)
        let listed = try #require(try db.outbox().first)
        #expect(listed.id == sent.id && listed.state == .queued && listed.text == nil)
    }

    /// A store from before: messages delivered then still held their text. Opening it drops them.
    @Test func messagesDeliveredBeforeLoseTheirTextWhenTheStoreIsOpened() throws {
        let (db, dir) = try temporaryDatabase(.sqlite)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (sent, _) = try queue("old-delivered-marker-2236", in: db)
        db.close()
        // As the previous release left it: delivered with its text, the migration not yet run.
        let sql = """
            UPDATE outboxMessage SET state = 'delivered', deliveredAt = 1800000000 WHERE id = '\(sent.id)';
            DELETE FROM grdb_migrations WHERE identifier = 'v11-delivered-messages-drop-text';
            """
        let old = try ChildProcess.capture(["/usr/bin/sqlite3", db.path, sql], environment: ProcessInfo.processInfo.environment)
        #expect(old.code == 0, "\(String(decoding: old.stderr, as: UTF8.self))")

        let reopened = try NearcardDatabase(path: db.path)
        #expect(try reopened.outboxItem(id: sent.id)?.text == nil)
        #expect(try reopened.outboxItem(id: sent.id)?.state == .delivered)
        reopened.close()
        for (file, data) in bytes(of: reopened) {
            #expect(data.range(of: Data("old-delivered-marker-2236".utf8)) == nil, "the text is still in \(URL(fileURLWithPath: file).lastPathComponent)")
        }
    }
}

/// Follow-ups with a lifetime (docs/PROTOCOL.md §15): gone from both boxes at `expiresAt`, on SQLite
/// and PostgreSQL alike.
@Suite struct ExpiryStoreTests {
    let did = "did:key:zDnaeGraceHopperExpiry0000000000000000000000000000000"

    @Test(arguments: Backend.allCases)
    func expiredMessagesLeaveBothBoxes(kind: Backend) throws {
        let (db, dir) = try temporaryDatabase(kind)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let grace = try db.recordContact(proximityContact(did: did, name: "Grace Hopper", message: "hi"), payloadJSON: "{}")
        let now = Date()
        let t = Int64(now.timeIntervalSince1970)
        let short = MessageEnvelope.make(text: "expiring-marker-1", from: "did:key:zMe", to: did, sentAt: t, expiresAt: t + 60, signer: Ed25519.PrivateKey())
        let lasting = MessageEnvelope.make(text: "lasting-marker-2", from: "did:key:zMe", to: did, sentAt: t, signer: Ed25519.PrivateKey())
        try db.enqueue(short, for: grace, now: now)
        try db.enqueue(lasting, for: grace, now: now)
        // The same two, received from Grace.
        let fromGrace = MessageEnvelope.make(
            text: "expiring-marker-3", from: did, to: "did:key:zMe", sentAt: t, expiresAt: t + 60, signer: Ed25519.PrivateKey())
        _ = try db.storeReceived(
            fromGrace, contactID: grace.id, senderPubKey: X25519.PrivateKey().publicKey, senderSignPubKey: Ed25519.PrivateKey().publicKey, at: now)
        #expect(try db.purgeExpiredMessages(now: now.addingTimeInterval(59)) == 0, "nothing before its time")
        #expect(try db.claimDueMessages(now: now.addingTimeInterval(61)).map(\.id) == [lasting.id], "an expired message is not sent")
        #expect(try db.purgeExpiredMessages(now: now.addingTimeInterval(61)) == 2)
        let outbox = try db.outbox(all: true)
        let gone = try #require(outbox.first { $0.id == short.id })
        #expect(gone.state == .failed && gone.lastError == "expired before delivery" && gone.text == nil)
        #expect(outbox.first { $0.id == lasting.id }?.state == .queued)
        #expect(try db.inbox().allSatisfy { $0.text != "expiring-marker-3" })
    }
}
