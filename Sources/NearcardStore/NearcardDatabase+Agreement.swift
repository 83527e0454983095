public import Foundation
public import NearcardModel

/// Agreement on an exchange's end (docs/PROTOCOL.md §11, protocol version 2). The initiator stores the
/// contact before it sends its last `done`, as *unconfirmed*; the responder stores it on that `done` and
/// confirms. When the confirmation is lost, the initiator asks later ("do you hold exchange E?") over
/// the mail channel and confirms or withdraws what it stored; a responder that answers "no" remembers
/// the exchange as withdrawn, so a `done` for it that arrives late stores nothing. Either both books
/// hold the contact or neither does.
extension NearcardDatabase {
    /// How `recordExchange` stores one exchange.
    public enum Confirmation: Sendable, Equatable {
        /// Stored for good (the responder, on the initiator's `done`; or an exchange outside the
        /// protocol). `edge`: the exchange's graph-edge id, refused if the peer was told it is withdrawn.
        case final(edge: String?)
        /// The initiator, before its `done`: unconfirmed until the responder confirms (`confirmExchange`)
        /// or says it does not hold it (`withdrawExchange`).
        case pending(edge: String)

        public static let final = Confirmation.final(edge: nil)
    }

    /// An exchange this node stored unconfirmed, waiting for the peer's word.
    public struct PendingConfirmation: Sendable, Equatable {
        public let edge: String
        public let contactDID: String
        /// The contact was new with this exchange (withdrawing it deletes the contact).
        public let newContact: Bool
        public let createdAt: Date
        public let attempts: Int
        public let nextAttemptAt: Date
        public let lastError: String?
    }

    /// The exchanges stored unconfirmed; `due` keeps those whose next query is due by then.
    package func pendingConfirmations(due: Date? = nil) throws(StoreError) -> [PendingConfirmation] {
        try read { db in
            let rows =
                try due.map { try db.rows("SELECT * FROM pendingConfirmation WHERE nextAttemptAt <= ? ORDER BY createdAt", $0.timeIntervalSince1970) }
                ?? db.rows("SELECT * FROM pendingConfirmation ORDER BY createdAt")
            return try rows.map { row in
                PendingConfirmation(
                    edge: try row["edge"], contactDID: try row["contactDID"], newContact: (try row["newContact"] as Int64) != 0,
                    createdAt: Date(timeIntervalSince1970: try row["createdAt"]), attempts: Int(try row["attempts"] as Int64),
                    nextAttemptAt: Date(timeIntervalSince1970: try row["nextAttemptAt"]), lastError: try row["lastError"])
            }
        }
    }

    /// The DIDs whose contact is unconfirmed (for listings): those whose latest exchange — the one the
    /// contact is as of, its graph edge — waits for the peer's word. An older exchange still waiting does
    /// not count once a later one has replaced the contact (§11: the contact stays as that one left it).
    public func unconfirmedContactDIDs() throws(StoreError) -> Set<String> {
        try read { db in
            Set(
                try db.rows("SELECT p.contactDID FROM pendingConfirmation p JOIN contact c ON c.did = p.contactDID AND c.graphExportEdgeId = p.edge")
                    .map { try $0[0] as String })
        }
    }

    /// The peer confirmed exchange `edge`: the contact is simply kept. Returns whether it was pending.
    @discardableResult
    package func confirmExchange(edge: String) throws(StoreError) -> Bool {
        try write { db in try db.execute("DELETE FROM pendingConfirmation WHERE edge = ?", edge) > 0 }
    }

    /// The peer does not hold exchange `edge`: undo it. A contact that was new with it is deleted with
    /// everything tied to it; an older contact it updated gets back the sealed route and graph edge of
    /// the exchange before (the peer holds that one, and the route's mailbox token is one it issued).
    /// When a later exchange has replaced it meanwhile, the contact is that exchange's and stays; an
    /// unconfirmed one among them inherits what this one would have undone. Returns the DID of a
    /// deleted contact.
    /// The history keeps a line for it (`withdrawnExchanges`): when, and whose only when the contact stays.
    @discardableResult
    package func withdrawExchange(edge: String, now: Date = Date()) throws(StoreError) -> String? {
        let deleted: String? = try write { db in
            guard
                let row = try db.row(
                    "SELECT contactDID, newContact, previousRoute, previousEdge, createdAt FROM pendingConfirmation WHERE edge = ?", edge)
            else {
                return nil
            }
            try db.execute("DELETE FROM pendingConfirmation WHERE edge = ?", edge)
            let did: String = try row[0]
            let newContact = (try row[1] as Int64) != 0
            let previousRoute: String? = try row[2]
            let previousEdge: String? = try row[3]
            let exchangedAt: Double = try row[4]
            let current: String? = try db.row("SELECT graphExportEdgeId FROM contact WHERE did = ?", did).flatMap { try $0[0] }
            // Whose it was is kept only when the contact stays in the book.
            let stays = current != nil && (current != edge || !newContact)
            try db.execute(
                "INSERT INTO withdrawnHistory (edge, contactDID, exchangedAt, withdrawnAt) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING", edge,
                stays ? did : nil, exchangedAt, now.timeIntervalSince1970)
            guard current == edge else {
                try db.execute(
                    "UPDATE pendingConfirmation SET newContact = ?, previousRoute = ?, previousEdge = ? WHERE contactDID = ? AND previousEdge = ?",
                    newContact ? 1 : 0, previousRoute, previousEdge, did, edge)
                return nil
            }
            if newContact { return did }
            if let previousEdge {
                try db.execute("UPDATE contact SET sealedRoute = ?, graphExportEdgeId = ? WHERE did = ?", previousRoute, previousEdge, did)
            }
            return nil
        }
        guard let deleted else { return nil }
        if let id = try contact(did: deleted)?.id { try deleteContact(id: id) }
        return deleted
    }

    /// Withdrawn exchanges, newest first: a contact's (`contactDID`), or those whose contact is gone
    /// (`contactDID` nil and `anonymousOnly`), or all.
    public func withdrawnExchanges(contactDID: String? = nil, anonymousOnly: Bool = false) throws(StoreError) -> [WithdrawnExchange] {
        try read { db in
            let rows =
                if let contactDID {
                    try db.rows("SELECT * FROM withdrawnHistory WHERE contactDID = ? ORDER BY withdrawnAt DESC", contactDID)
                } else if anonymousOnly {
                    try db.rows("SELECT * FROM withdrawnHistory WHERE contactDID IS NULL ORDER BY withdrawnAt DESC")
                } else {
                    try db.rows("SELECT * FROM withdrawnHistory ORDER BY withdrawnAt DESC")
                }
            return try rows.map { row in
                WithdrawnExchange(
                    contactDID: try row["contactDID"], exchangedAt: Date(timeIntervalSince1970: try row["exchangedAt"]),
                    withdrawnAt: Date(timeIntervalSince1970: try row["withdrawnAt"]))
            }
        }
    }

    /// A failed query: try again at `next`.
    package func postponeConfirmation(edge: String, error: String, next: Date) throws(StoreError) {
        try write { db in
            try db.execute(
                "UPDATE pendingConfirmation SET attempts = attempts + 1, lastError = ?, nextAttemptAt = ? WHERE edge = ?",
                String(error.prefix(512)), next.timeIntervalSince1970, edge)
        }
    }

    /// Answers a contact's confirmation query about exchange `edge` (asked by the holder of `pubKey`,
    /// the peer's pinned X25519 key): held when this node's contact of that peer is from that very
    /// exchange. When it is not (no contact, or one from another exchange), the exchange is remembered
    /// as withdrawn first — in the same transaction — so its `done`, should it still arrive, stores
    /// nothing: the answer stays false, and the peer puts back what it had before.
    package func answerConfirmation(edge: String, pubKey: String, now: Date = Date()) throws(StoreError) -> Bool {
        try write { db in
            try db.lock("exchange:" + edge)
            let row = try db.row("SELECT graphExportEdgeId FROM contact WHERE pubKey = ?", pubKey)
            let currentEdge: String? = try row.flatMap { try $0[0] }
            guard currentEdge == edge else {
                try db.execute("INSERT INTO withdrawnExchange (edge, at) VALUES (?, ?) ON CONFLICT DO NOTHING", edge, now.timeIntervalSince1970)
                return false
            }
            return true
        }
    }
}
