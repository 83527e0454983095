public import Foundation
public import NearcardCrypto
public import NearcardModel

/// What became of a card that arrived outside an exchange (a QR code, `contacts add`, `contacts import`).
public struct KeptContact: Sendable {
    public enum Outcome: Sendable, Equatable {
        /// A new contact.
        case added
        /// A new contact (no DID) that looks like one already in the book: the same name, email or phone.
        case possibleDuplicate(of: Contact)
        /// Someone already in the book (the same DID): these fields were added or refreshed (none: nothing new).
        case merged(changed: [CardField])
        /// The very same card (no DID) is already in the book; nothing was stored.
        case alreadyThere
    }

    public let contact: Contact
    public let outcome: Outcome

    /// One line for people: "added", "already in your contacts: 1 field updated (email)", …
    public var summary: String {
        switch outcome {
        case .added:
            return "added"
        case .possibleDuplicate(let other):
            return "added; possibly the same person as \(other.name) (\(other.id.prefix(8))), already in your contacts"
        case .alreadyThere:
            return "already in your contacts: nothing new"
        case .merged(let changed):
            if changed.isEmpty { return "already in your contacts: nothing new" }
            return
                "already in your contacts: \(changed.count) field\(changed.count == 1 ? "" : "s") updated (\(changed.map(\.rawValue).joined(separator: ", ")))"
        }
    }

    /// `added`, `merged`, `unchanged` or `possibleDuplicate`, and the fields changed, for `--json`.
    public var json: JSONValue {
        var o: JSONObject = [:]
        switch outcome {
        case .added: o["outcome"] = "added"
        case .possibleDuplicate(let other):
            o["outcome"] = "possibleDuplicate"
            o["possibleDuplicateOf"] = .string(other.id)
        case .merged(let changed):
            o["outcome"] = changed.isEmpty ? "unchanged" : "merged"
            o["changed"] = .array(changed.map { .string($0.rawValue) })
        case .alreadyThere: o["outcome"] = "unchanged"
        }
        return .object(o)
    }
}

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
        do { try incoming.card.validate() } catch { throw StoreError(.invalidInput, error.message) }
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
