public import Foundation
public import NearcardModel

extension NearcardDatabase {
    public func trustGroup(root: String, name: String, depth: Int?, now: Date = Date()) throws(StoreError) {
        try write { db in
            try db.execute(
                """
                INSERT INTO trustedGroup (root, name, depth, addedAt) VALUES (?, ?, ?, ?)
                ON CONFLICT(root) DO UPDATE SET name = excluded.name, depth = excluded.depth
                """, root, name, depth, now.timeIntervalSince1970)
            try Self.announce(.trust, db)
        }
    }

    @discardableResult
    public func untrustGroup(root: String) throws(StoreError) -> Bool {
        try write { db in
            try Self.announce(.trust, db)
            return try db.execute("DELETE FROM trustedGroup WHERE root = ?", root) > 0
        }
    }

    public func trustedGroups() throws(StoreError) -> [TrustedGroup] {
        try read { db in
            try db.rows("SELECT * FROM trustedGroup ORDER BY addedAt").map {
                TrustedGroup(root: try $0["root"], name: try $0["name"], depth: try $0["depth"], addedAt: Date(timeIntervalSince1970: try $0["addedAt"]))
            }
        }
    }

    public func trustedGroup(root: String) throws(StoreError) -> TrustedGroup? {
        try trustedGroups().first { $0.root == root }
    }

    // MARK: the user's own issuer proof

    /// The group-membership proof (Semaphore JSON) the user's card carries, if any.
    public func issuerProof() throws(StoreError) -> String? {
        try read { db in try db.value("SELECT value FROM setting WHERE key = 'card.issuerProof'") }
    }

    public func setIssuerProof(_ proof: String?) throws(StoreError) {
        defer { forgetSharedCard() }
        try write { db in
            if let proof {
                try db.execute(
                    "INSERT INTO setting (key, value) VALUES ('card.issuerProof', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    proof)
            } else {
                try db.execute("DELETE FROM setting WHERE key = 'card.issuerProof'")
            }
            try Self.announce(.card, db)
        }
    }
}
