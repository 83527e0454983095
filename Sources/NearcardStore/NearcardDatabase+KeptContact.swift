public import Foundation
public import NearcardCrypto
public import NearcardModel

extension NearcardDatabase {
    /// Keeps a card that arrived outside an exchange, by the one rule for people already in the book
    /// (`ContactMerge`): the same DID merges into that contact; the same card without a DID is not
    /// stored twice; a card without a DID that looks like a contact is stored and reported as a
    /// possible duplicate. The credential the card came with (if any) is stored and linked, all in one
    /// transaction. `payloadJSON` is the code's content, kept for audit unless the contact already
    /// keeps the signed payload of an exchange. `presenceKey` is the one the person handed over in an
    /// exchange (docs/PROTOCOL.md §3): a value replaces the stored one; nil keeps it.
    @discardableResult
    public func keep(
        _ incoming: Contact, payloadJSON: String? = nil, credential: StoredCredential? = nil, presenceKey: [UInt8]? = nil,
        now: Date = Date()
    ) throws(StoreError) -> KeptContact {
        do { try incoming.card.validate() } catch { throw StoreError(.invalidInput, error.phrase) }
        try Self.checkPresenceKey(presenceKey)
        return try write { db in
            let kept = try Self.keep(incoming, payloadJSON: payloadJSON, credential: credential, now: now, db: db)
            if let presenceKey {
                try db.execute("UPDATE contact SET presenceKey = ? WHERE id = ?", presenceKey, kept.contact.id)
            }
            return kept
        }
    }

    static func keep(_ incoming: Contact, payloadJSON: String?, credential: StoredCredential?, now: Date, db: any SQLConnection) throws -> KeptContact {
        try announce(.contacts, db)
        if let credential { try Self.saveCredential(credential, db: db) }
        var incoming = incoming
        if let credential, !incoming.credentialIds.contains(credential.id) { incoming.credentialIds.append(credential.id) }
        if let did = incoming.didPublicKey {
            try db.lock(did)
            guard let row = try db.row("SELECT * FROM contact WHERE did = ?", did) else {
                return KeptContact(contact: try Self.upsertContact(incoming, payloadJSON: payloadJSON, now: now, db: db), outcome: .added)
            }
            let existing = try Self.contact(row)
            let result = ContactMerge.merge(existing: existing, incoming: incoming, now: now)
            let stored: String? = try row["payloadJSON"]
            let keptPayload = existing.source == .proximity ? stored : (payloadJSON ?? stored)
            try Self.insert(result.contact, payloadJSON: keptPayload, db: db)
            return KeptContact(contact: result.contact, outcome: .merged(changed: result.changed))
        }
        let all = try db.rows("SELECT * FROM contact ORDER BY receivedAt").map(Self.contact)
        if let same = all.first(where: { $0.didPublicKey == nil && $0.card == incoming.card }) {
            var touched = same
            touched.lastInteraction = now
            try db.execute("UPDATE contact SET lastInteraction = ? WHERE id = ?", now.timeIntervalSince1970, same.id)
            return KeptContact(contact: touched, outcome: .alreadyThere)
        }
        try Self.insert(incoming, payloadJSON: payloadJSON, db: db)
        if let alike = all.first(where: { ContactMerge.looksAlike($0.card, incoming.card) }) {
            return KeptContact(contact: incoming, outcome: .possibleDuplicate(of: alike))
        }
        return KeptContact(contact: incoming, outcome: .added)
    }
}
