public import Foundation
public import NearcardCrypto
public import NearcardModel

extension NearcardDatabase {
    // MARK: trust anchors

    public func addTrustAnchor(_ did: String, note: String? = nil, now: Date = Date()) throws(StoreError) {
        try write { db in
            try db.execute(
                "INSERT INTO trustAnchor (did, addedAt, note) VALUES (?, ?, ?) ON CONFLICT(did) DO UPDATE SET note = excluded.note",
                did, now.timeIntervalSince1970, note)
            try Self.announce(.trust, db)
        }
    }

    @discardableResult
    public func removeTrustAnchor(_ did: String) throws(StoreError) -> Bool {
        try write { db in
            try Self.announce(.trust, db)
            return try db.execute("DELETE FROM trustAnchor WHERE did = ?", did) > 0
        }
    }

    public func trustAnchors() throws(StoreError) -> [(did: String, addedAt: Date, note: String?)] {
        try read { db in
            try db.rows("SELECT * FROM trustAnchor ORDER BY addedAt").map { (try $0["did"], Date(timeIntervalSince1970: try $0["addedAt"]), try $0["note"]) }
        }
    }

    /// A trusted issuer: a trust anchor, or a contact verified in person (an exchange).
    public func isTrustedIssuer(_ did: String) throws(StoreError) -> Bool {
        try read { db in
            if try db.row("SELECT 1 FROM trustAnchor WHERE did = ?", did) != nil { return true }
            return try db.row("SELECT 1 FROM contact WHERE did = ? AND source = 'proximity' AND verificationStatus = 'verified'", did) != nil
        }
    }

    // MARK: credentials

    public func saveCredential(_ c: StoredCredential) throws(StoreError) {
        try write { db in try Self.saveCredential(c, db: db) }
    }

    static func saveCredential(_ c: StoredCredential, db: any SQLConnection) throws {
        try db.execute(
            """
            INSERT INTO credential (id, issuer, subject, typesJSON, jwt, issuedAt, expiresAt, status, reason, importedAt)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET status = excluded.status, reason = excluded.reason, jwt = excluded.jwt
            """, c.id, c.issuer, c.subject, JSONValue.array(c.types.map { .string($0) }).compactText, c.jwt,
            c.issuedAt?.timeIntervalSince1970, c.expiresAt?.timeIntervalSince1970, c.status.rawValue, c.reason,
            c.importedAt.timeIntervalSince1970)
    }

    public func credentials() throws(StoreError) -> [StoredCredential] {
        try read { db in try db.rows("SELECT * FROM credential ORDER BY importedAt").map(Self.credential) }
    }

    /// By id, or a unique part of it.
    public func credential(_ query: String) throws(StoreError) -> StoredCredential {
        let all = try credentials()
        if let exact = all.first(where: { $0.id == query }) { return exact }
        let matches = all.filter { $0.id.localizedCaseInsensitiveContains(query) }
        guard matches.count == 1 else {
            throw StoreError(
                .notFound,
                matches.isEmpty
                    ? Phrase("no credential matches \"%1$@\"", query)
                    : Phrase("\"%1$@\" matches %2$@ credentials; give more of the id", query, String(matches.count)))
        }
        return matches[0]
    }

    static func credential(_ row: SQLRow) throws -> StoredCredential {
        StoredCredential(
            Credential(
                id: try row["id"], issuer: try row["issuer"], subject: try row["subject"],
                types: ((try? JSONParser.parse(try row["typesJSON"] as String))?.arrayValue ?? []).compactMap(\.stringValue),
                jwt: try row["jwt"], issuedAt: (try row["issuedAt"] as Double?).map { Date(timeIntervalSince1970: $0) },
                expiresAt: (try row["expiresAt"] as Double?).map { Date(timeIntervalSince1970: $0) },
                status: VerificationStatus(rawValue: try row["status"]) ?? .unverified, reason: try row["reason"]),
            importedAt: Date(timeIntervalSince1970: try row["importedAt"]))
    }
}
