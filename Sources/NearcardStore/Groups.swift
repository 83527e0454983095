import Foundation
internal import GRDB

/// A Semaphore group the user trusts, named by its Merkle root.
public struct TrustedGroup: Sendable, Equatable {
    public let root: String
    public let name: String
    public let depth: Int?
    public let addedAt: Date
}

extension NearcardDatabase {
    public func trustGroup(root: String, name: String, depth: Int?, now: Date = Date()) throws(StoreError) {
        try write { db in
            try db.execute(sql: """
                INSERT INTO trustedGroup (root, name, depth, addedAt) VALUES (?, ?, ?, ?)
                ON CONFLICT(root) DO UPDATE SET name = excluded.name, depth = excluded.depth
                """, arguments: [root, name, depth, now.timeIntervalSince1970])
        }
    }

    @discardableResult
    public func untrustGroup(root: String) throws(StoreError) -> Bool {
        try write { db in
            try db.execute(sql: "DELETE FROM trustedGroup WHERE root = ?", arguments: [root])
            return db.changesCount > 0
        }
    }

    public func trustedGroups() throws(StoreError) -> [TrustedGroup] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM trustedGroup ORDER BY addedAt").map {
                TrustedGroup(root: $0["root"], name: $0["name"], depth: $0["depth"], addedAt: Date(timeIntervalSince1970: $0["addedAt"]))
            }
        }
    }

    public func trustedGroup(root: String) throws(StoreError) -> TrustedGroup? {
        try trustedGroups().first { $0.root == root }
    }

    // MARK: the user's own issuer proof

    /// The group-membership proof (Semaphore JSON) the user's card carries, if any.
    public func issuerProof() throws(StoreError) -> String? {
        try read { db in try String.fetchOne(db, sql: "SELECT value FROM setting WHERE key = 'card.issuerProof'") }
    }

    public func setIssuerProof(_ proof: String?) throws(StoreError) {
        try write { db in
            if let proof {
                try db.execute(sql: "INSERT INTO setting (key, value) VALUES ('card.issuerProof', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                               arguments: [proof])
            } else {
                try db.execute(sql: "DELETE FROM setting WHERE key = 'card.issuerProof'")
            }
        }
    }
}
