package import Foundation
import NearcardCrypto

/// QR invitations this node issued (docs/PROTOCOL.md §19): each a one-time secret, an expiry and a
/// number of uses left. Kept in the database so the listening node (another process) can check them.
extension NearcardDatabase {
    /// Why an invitation cannot be used now.
    public enum InvitationProblem: Error, Sendable, Equatable, CustomStringConvertible {
        case unknown, expired, usedUp
        public var description: String {
            switch self {
            case .unknown: "this node issued no such invitation (or it was withdrawn)"
            case .expired: "the invitation has expired"
            case .usedUp: "the invitation has been used already"
            }
        }
    }

    package func createInvitation(id: [UInt8], secret: [UInt8], expires: Date, uses: Int, now: Date = Date()) throws(StoreError) {
        try write { db in
            try db.execute("DELETE FROM invitation WHERE expiresAt < ?", now.timeIntervalSince1970 - 86400)
            try db.execute(
                "INSERT INTO invitation (id, secret, createdAt, expiresAt, usesLeft) VALUES (?, ?, ?, ?, ?)",
                Base64.urlEncode(id), secret, now.timeIntervalSince1970, expires.timeIntervalSince1970, uses)
        }
    }

    /// The secret of a usable invitation, or why it cannot be used.
    package func invitationSecret(id: [UInt8], now: Date = Date()) throws(StoreError) -> Result<[UInt8], InvitationProblem> {
        try read { db in
            guard let row = try db.row("SELECT secret, expiresAt, usesLeft FROM invitation WHERE id = ?", Base64.urlEncode(id)) else {
                return .failure(.unknown)
            }
            if (try row["expiresAt"] as Double) < now.timeIntervalSince1970 { return .failure(.expired) }
            if (try row["usesLeft"] as Int) <= 0 { return .failure(.usedUp) }
            return .success(try row["secret"] as [UInt8])
        }
    }

    /// Spends one use, atomically: false when none was left (another session took the last) or it expired.
    package func useInvitation(id: [UInt8], now: Date = Date()) throws(StoreError) -> Bool {
        try write { db in
            try db.execute(
                "UPDATE invitation SET usesLeft = usesLeft - 1 WHERE id = ? AND usesLeft > 0 AND expiresAt >= ?",
                Base64.urlEncode(id), now.timeIntervalSince1970) == 1
        }
    }
}
