public import Foundation
import NearcardCrypto

/// A webhook delivery waiting in the store's durable queue (or the record of one done).
public struct WebhookDelivery: Sendable, Equatable {
    public enum State: String, Sendable, CaseIterable { case queued, delivered, failed }
    /// The exchange's id (the same for every retry: receivers use it to drop repeats).
    public let id: String
    public let url: String
    public let body: String
    public let createdAt: Date
    public let state: State
    public let attempts: Int
    public let nextAttemptAt: Date
    public let lastError: String?
}

extension NearcardDatabase {
    /// Claims up to `limit` due deliveries for `lease` seconds (on PostgreSQL `FOR UPDATE SKIP LOCKED`,
    /// so each goes out from one bot of a fleet at a time).
    package func claimDueWebhooks(now: Date = Date(), lease: TimeInterval = 60, limit: Int = 8) throws(StoreError) -> [WebhookDelivery] {
        try write { db in
            let t = now.timeIntervalSince1970
            var sql =
                "SELECT * FROM webhookDelivery WHERE state = 'queued' AND nextAttemptAt <= ? AND (leaseUntil IS NULL OR leaseUntil < ?) ORDER BY nextAttemptAt LIMIT ?"
            if db.dialect == .postgres { sql += " FOR UPDATE SKIP LOCKED" }
            let rows = try db.rows(sql, [.real(t), .real(t), .integer(Int64(limit))])
            for row in rows { try db.execute("UPDATE webhookDelivery SET leaseUntil = ? WHERE id = ?", t + lease, try row["id"] as String) }
            return try rows.map(Self.webhookDelivery)
        }
    }

    package func markWebhookDelivered(id: String, at: Date = Date()) throws(StoreError) {
        try write { db in
            try db.execute(
                "UPDATE webhookDelivery SET state = 'delivered', deliveredAt = ?, attempts = attempts + 1, leaseUntil = NULL, lastError = NULL WHERE id = ?",
                at.timeIntervalSince1970, id)
        }
    }

    /// A failed attempt: queued again at `retryAt`, or failed for good when nil.
    package func markWebhookFailed(id: String, error: String, retryAt: Date?) throws(StoreError) {
        try write { db in
            if let retryAt {
                try db.execute(
                    "UPDATE webhookDelivery SET attempts = attempts + 1, lastError = ?, nextAttemptAt = ?, leaseUntil = NULL WHERE id = ?",
                    error, retryAt.timeIntervalSince1970, id)
            } else {
                try db.execute(
                    "UPDATE webhookDelivery SET attempts = attempts + 1, lastError = ?, state = 'failed', leaseUntil = NULL WHERE id = ?",
                    error, id)
            }
        }
    }

    /// Deliveries, oldest first (all states).
    package func webhookDeliveries() throws(StoreError) -> [WebhookDelivery] {
        try read { db in try db.rows("SELECT * FROM webhookDelivery ORDER BY createdAt").map(Self.webhookDelivery) }
    }

    static func webhookDelivery(_ row: SQLRow) throws -> WebhookDelivery {
        WebhookDelivery(
            id: try row["id"], url: try row["url"], body: try row["body"], createdAt: Date(timeIntervalSince1970: try row["createdAt"]),
            state: WebhookDelivery.State(rawValue: try row["state"]) ?? .failed, attempts: try row["attempts"],
            nextAttemptAt: Date(timeIntervalSince1970: try row["nextAttemptAt"]), lastError: try row["lastError"])
    }
}
