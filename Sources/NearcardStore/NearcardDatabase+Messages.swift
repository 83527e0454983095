package import Foundation
public import NearcardCrypto
public import NearcardModel

extension NearcardDatabase {
    // MARK: outbox

    /// Queues a message for a contact; it is due at once.
    @discardableResult
    package func enqueue(_ envelope: MessageEnvelope, for contact: Contact, now: Date = Date()) throws(StoreError) -> OutboxItem {
        guard let did = contact.didPublicKey else {
            throw StoreError(.invalidInput, Phrase("%1$@ has no DID: only contacts from an exchange can be messaged", contact.name))
        }
        try write { db in
            try db.execute(
                """
                INSERT INTO outboxMessage (id, contactID, contactDID, text, envelopeJSON, createdAt, state, attempts, nextAttemptAt, fromDID, expiresAt)
                VALUES (?, ?, ?, ?, ?, ?, 'queued', 0, ?, ?, ?)
                """, envelope.id, contact.id, did, envelope.text, envelope.json.canonicalText,
                now.timeIntervalSince1970, now.timeIntervalSince1970, envelope.from, envelope.expiresAt.map { Double($0) })
        }
        guard let item = try outboxItem(id: envelope.id) else { throw StoreError(.database, Phrase("the queued message vanished")) }
        return item
    }

    /// Claims up to `limit` due messages for `lease` seconds, so two senders (a running node and a
    /// `nearcard message` command, or two bots of a fleet) do not work on the same one at once: on
    /// PostgreSQL the rows are taken `FOR UPDATE SKIP LOCKED`, so a message another bot is claiming
    /// is passed over, not waited for. A crash lets the lease lapse.
    /// `now` is the due horizon; `leaseFrom` (default `now`) is the clock the lease runs on.
    /// `fromDID` takes only the messages that identity signed (a fleet whose bots have keys of their own).
    package func claimDueMessages(
        now: Date = Date(), leaseFrom: Date? = nil, lease: TimeInterval = 60, limit: Int = 16, contactDID: String? = nil,
        fromDID: String? = nil
    ) throws(StoreError) -> [OutboxItem] {
        let ids: [String] = try write { db in
            let due = now.timeIntervalSince1970
            let t = (leaseFrom ?? now).timeIntervalSince1970
            // A message whose text was removed (it was delivered) is never sent again, whatever its state says.
            var sql = """
                SELECT id FROM outboxMessage WHERE state = 'queued' AND envelopeJSON != '' AND nextAttemptAt <= ? AND (leaseUntil IS NULL OR leaseUntil < ?)
                AND (expiresAt IS NULL OR expiresAt > ?)
                """
            var args: [SQLValue] = [.real(due), .real(t), .real(t)]
            if let contactDID {
                sql += " AND contactDID = ?"
                args.append(.text(contactDID))
            }
            if let fromDID {
                sql += " AND (fromDID IS NULL OR fromDID = ?)"
                args.append(.text(fromDID))
            }
            sql += " ORDER BY nextAttemptAt LIMIT ?"
            args.append(.integer(Int64(limit)))
            if db.dialect == .postgres { sql += " FOR UPDATE SKIP LOCKED" }
            let ids: [String] = try db.values(sql, args)
            for id in ids { try db.execute("UPDATE outboxMessage SET leaseUntil = ? WHERE id = ?", t + lease, id) }
            return ids
        }
        var items: [OutboxItem] = []
        for id in ids { if let item = try outboxItem(id: id) { items.append(item) } }
        return items
    }

    /// Records that the contact's node acknowledged the message, and drops its text: the text and the
    /// signed envelope (which holds the text, and whose signature would confirm a guess of it) are
    /// emptied in the same transaction; id, recipient, times, attempts and state stay. Then the engine's
    /// leftovers go as after a deletion (`compact()`): SQLite's `secure_delete` has zeroed the old
    /// bytes and the WAL is checkpointed and truncated. Acknowledging it again changes nothing.
    package func markDelivered(id: String, at: Date = Date()) throws(StoreError) {
        let changed = try write { db in
            try db.execute(
                """
                UPDATE outboxMessage SET state = 'delivered', deliveredAt = ?, leaseUntil = NULL, attempts = attempts + 1, lastError = NULL,
                    text = '', envelopeJSON = '' WHERE id = ? AND state != 'delivered'
                """, at.timeIntervalSince1970, id)
        }
        if changed > 0 { compact() }
    }

    /// Records a failed attempt: queued again at `retryAt`, or failed for good when `retryAt` is nil.
    /// A message another sender delivered meanwhile (its lease had lapsed) stays delivered.
    package func markAttemptFailed(id: String, error: String, retryAt: Date?) throws(StoreError) {
        try write { db in
            if let retryAt {
                try db.execute(
                    "UPDATE outboxMessage SET attempts = attempts + 1, lastError = ?, nextAttemptAt = ?, leaseUntil = NULL WHERE id = ? AND state = 'queued'",
                    error, retryAt.timeIntervalSince1970, id)
            } else {
                try db.execute(
                    "UPDATE outboxMessage SET attempts = attempts + 1, lastError = ?, state = 'failed', leaseUntil = NULL WHERE id = ? AND state = 'queued'",
                    error, id)
            }
        }
    }

    /// How many messages are in each state (for a node's metrics).
    package func outboxCounts() throws(StoreError) -> [OutboxItem.State: Int] {
        try read { db in
            var counts: [OutboxItem.State: Int] = [:]
            for row in try db.rows("SELECT state, COUNT(*) FROM outboxMessage GROUP BY state") {
                if let state = OutboxItem.State(rawValue: try row[0]) { counts[state] = try row[1] }
            }
            return counts
        }
    }

    public func outboxItem(id: String) throws(StoreError) -> OutboxItem? {
        try read { db in try db.row(Self.outboxSelect + " WHERE o.id = ?", id).map(Self.outboxItem) }
    }

    /// Messages not yet delivered (queued or failed); with `all`, delivered ones too. Oldest first.
    public func outbox(all: Bool = false) throws(StoreError) -> [OutboxItem] {
        try purgeExpiredMessages()
        return try read { db in
            try db.rows(Self.outboxSelect + (all ? "" : " WHERE o.state != 'delivered'") + " ORDER BY o.createdAt").map(Self.outboxItem)
        }
    }

    static let outboxSelect = "SELECT o.*, c.name AS contactName FROM outboxMessage o LEFT JOIN contact c ON c.id = o.contactID"

    static func outboxItem(_ row: SQLRow) throws -> OutboxItem {
        let id: String = try row["id"]
        let contactDID: String = try row["contactDID"]
        let createdAt = Date(timeIntervalSince1970: try row["createdAt"])
        let state = OutboxItem.State(rawValue: try row["state"]) ?? .failed
        let stored: String = try row["envelopeJSON"]
        let text: String?
        let envelope: MessageEnvelope
        if stored.isEmpty {
            // The text was removed at delivery (`markDelivered`); what is left is metadata.
            text = nil
            envelope = MessageEnvelope(
                id: id, from: (try row["fromDID"] as String?) ?? "", to: contactDID, sentAt: Int64(createdAt.timeIntervalSince1970), text: "")
        } else {
            text = try row["text"]
            envelope = try MessageEnvelope(json: try JSONParser.parse(stored))
        }
        return OutboxItem(
            id: id, contactID: try row["contactID"], contactDID: contactDID,
            contactName: try row["contactName"] ?? "(deleted contact)",
            text: text, envelope: envelope, createdAt: createdAt,
            state: state, attempts: try row["attempts"],
            nextAttemptAt: Date(timeIntervalSince1970: try row["nextAttemptAt"]), lastError: try row["lastError"],
            deliveredAt: (try row["deliveredAt"] as Double?).map { Date(timeIntervalSince1970: $0) })
    }

    // MARK: inbox

    /// The route we issued with this mailbox token, if any.
    package func issuedRoute(mailboxToken: [UInt8]) throws(StoreError) -> IssuedRoute? {
        try read { db in
            try db.row("SELECT * FROM issuedRoute WHERE mailboxToken = ?", Base64.urlEncode(mailboxToken)).map { row in
                IssuedRoute(
                    mailboxToken: mailboxToken, contactDID: try row["contactDID"], issuedAt: Date(timeIntervalSince1970: try row["issuedAt"]),
                    expiresAt: Date(timeIntervalSince1970: try row["expiresAt"]))
            }
        }
    }

    /// Stores a received message unless it is already there (same sender and id): returns false for
    /// a duplicate. The caller acknowledges only after this returns, so a crash never loses one.
    package func storeReceived(
        _ envelope: MessageEnvelope, contactID: String?, senderPubKey: X25519.PublicKey,
        senderSignPubKey: Ed25519.PublicKey, at: Date = Date()
    ) throws(StoreError) -> Bool {
        try write { db in
            try db.execute(
                """
                INSERT INTO inboxMessage (fromDID, id, contactID, text, sentAt, receivedAt, senderPubKey, senderSignPubKey, envelopeJSON, expiresAt)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                """, envelope.from, envelope.id, contactID, envelope.text, Double(envelope.sentAt), at.timeIntervalSince1970,
                Base64.encode(senderPubKey.rawRepresentation), Base64.encode(senderSignPubKey.rawRepresentation),
                envelope.json.canonicalText, envelope.expiresAt.map { Double($0) }) > 0
        }
    }

    /// Deletes every follow-up past its `expiresAt` (§15): received ones go; queued ones are given up
    /// ("expired before delivery") and, like delivered ones, keep their metadata and lose their text.
    /// Returns how many were removed or given up. Then the engine's leftovers go (`compact()`).
    @discardableResult
    package func purgeExpiredMessages(now: Date = Date()) throws(StoreError) -> Int {
        let t = now.timeIntervalSince1970
        let n = try write { db in
            try db.execute("DELETE FROM inboxMessage WHERE expiresAt IS NOT NULL AND expiresAt <= ?", t)
                + db.execute(
                    """
                    UPDATE outboxMessage SET state = CASE state WHEN 'delivered' THEN 'delivered' ELSE 'failed' END,
                        lastError = CASE state WHEN 'delivered' THEN lastError ELSE 'expired before delivery' END,
                        text = '', envelopeJSON = '', leaseUntil = NULL
                    WHERE expiresAt IS NOT NULL AND expiresAt <= ? AND (text != '' OR envelopeJSON != '')
                    """, t)
        }
        if n > 0 { compact() }
        return n
    }

    /// Messages received from `since` on, from one sender.
    package func receivedCount(fromDID: String, since: Date) throws(StoreError) -> Int {
        try read { db in try db.value("SELECT COUNT(*) FROM inboxMessage WHERE fromDID = ? AND receivedAt >= ?", fromDID, since.timeIntervalSince1970) ?? 0 }
    }

    /// Received messages, newest first; `contactDID` narrows to one sender. Expired ones are deleted first.
    public func inbox(contactDID: String? = nil) throws(StoreError) -> [InboxItem] {
        try purgeExpiredMessages()
        return try read { db in
            var sql = """
                SELECT i.*, c.name AS contactName, c.pubKey AS contactPubKey, c.signPubKey AS contactSignPubKey
                FROM inboxMessage i LEFT JOIN contact c ON c.did = i.fromDID
                """
            var args: [SQLValue] = []
            if let contactDID {
                sql += " WHERE i.fromDID = ?"
                args.append(.text(contactDID))
            }
            sql += " ORDER BY i.receivedAt DESC"
            return try db.rows(sql, args).map { row in
                let contactKeys = (try row["contactPubKey"] as String?, try row["contactSignPubKey"] as String?)
                let senderKeys = (try row["senderPubKey"] as String, try row["senderSignPubKey"] as String)
                let matched = contactKeys.0 == senderKeys.0 && contactKeys.1 == senderKeys.1
                return InboxItem(
                    id: try row["id"], fromDID: try row["fromDID"], contactID: try row["contactID"], contactName: try row["contactName"],
                    text: try row["text"], sentAt: Date(timeIntervalSince1970: try row["sentAt"]),
                    receivedAt: Date(timeIntervalSince1970: try row["receivedAt"]), keysMatched: matched)
            }
        }
    }
}
