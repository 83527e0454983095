public import Foundation
import NearcardCrypto
public import NearcardModel

/// Presence keys (docs/PROTOCOL.md §3): this node's own, which its contacts recognise it by, and each
/// contact's, with which this node recognises them among the anonymous announcements on the LAN.
extension NearcardDatabase {
    /// This node's presence key (16 bytes), made and kept on first use.
    package func presenceKey(now: Date = Date(), upToDate: Bool = false) throws(StoreError) -> [UInt8] {
        // Read with the card a session sends (kept up to `sharedCardTTL`), unless `upToDate` asks for
        // the stored one as it is now (an announcement made once in a while).
        if upToDate { forgetSharedCard() }
        if let stored = try sharedCard().presenceKey { return stored }
        defer { forgetSharedCard() }
        return try write { db in
            // Two processes making it at once keep the first one written.
            try db.execute(
                "INSERT INTO presence (id, presenceKey, createdAt) VALUES (1, ?, ?) ON CONFLICT(id) DO NOTHING",
                Presence.makeKey(), now.timeIntervalSince1970)
            guard let key: [UInt8] = try db.value("SELECT presenceKey FROM presence WHERE id = 1"), key.count == Presence.keyByteCount else {
                throw StoreError(.database, Phrase("the stored presence key is damaged; `nearcard id rotate-presence` makes a new one"))
            }
            return key
        }
    }

    /// Replaces this node's presence key with a fresh one: contacts stop recognising this node until
    /// the next exchange with each of them hands over the new key. Returns the new key.
    @discardableResult
    public func rotatePresenceKey(now: Date = Date()) throws(StoreError) -> [UInt8] {
        defer { forgetSharedCard() }
        let key = Presence.makeKey()
        try write { db in
            try db.execute(
                """
                INSERT INTO presence (id, presenceKey, createdAt) VALUES (1, ?, ?)
                ON CONFLICT(id) DO UPDATE SET presenceKey = excluded.presenceKey, createdAt = excluded.createdAt
                """, key, now.timeIntervalSince1970)
            try Self.announce(.presence, db)
        }
        return key
    }

    /// When this node's presence key was made (nil: not yet).
    package func presenceKeyCreatedAt() throws(StoreError) -> Date? {
        try read { db in
            (try db.value("SELECT createdAt FROM presence WHERE id = 1") as Double?).map { Date(timeIntervalSince1970: $0) }
        }
    }

    /// Every contact with a DID and a presence key, by name.
    public func contactPresenceKeys() throws(StoreError) -> [ContactPresence] {
        try read { db in
            try db.rows("SELECT did, name, presenceKey FROM contact WHERE did IS NOT NULL AND presenceKey IS NOT NULL ORDER BY name, did").compactMap { row in
                let key: [UInt8] = try row[2]
                guard key.count == Presence.keyByteCount else { return nil }
                return ContactPresence(did: try row[0], name: try row[1], presenceKey: key)
            }
        }
    }

    /// The presence key a contact handed over (nil: none yet).
    package func presenceKey(contactDID did: String) throws(StoreError) -> [UInt8]? {
        try read { db in
            let key: [UInt8]? = try db.value("SELECT presenceKey FROM contact WHERE did = ?", did)
            return key?.count == Presence.keyByteCount ? key : nil
        }
    }

    /// Checks a presence key handed over by a peer before it is stored.
    static func checkPresenceKey(_ key: [UInt8]?) throws(StoreError) {
        if let key, key.count != Presence.keyByteCount {
            throw StoreError(.invalidInput, Phrase("a presence key is %1$@ bytes, not %2$@", String(Presence.keyByteCount), String(key.count)))
        }
    }
}
