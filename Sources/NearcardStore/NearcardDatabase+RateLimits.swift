public import Foundation
import NearcardCrypto
public import NearcardModel

/// A bot policy's rate limits (docs/BOT.md `rateLimits`), counted in the store: a restart does not
/// reset them, and every bot of a fleet on one PostgreSQL database counts the same acceptances.
extension NearcardDatabase {
    public typealias AcceptanceLimit = NearcardModel.AcceptanceLimit
    public typealias AcceptanceVerdict = NearcardModel.AcceptanceVerdict

    /// Counts `did`'s acceptances and everyone's within the windows and, when both are under their
    /// limits, records this one — in one transaction, serialised across a fleet, so two bots deciding
    /// at once cannot both take the last place.
    public func admitAcceptance(
        did: String, perPeer: AcceptanceLimit?, overall: AcceptanceLimit?, now: Date = Date()
    ) throws(StoreError) -> AcceptanceVerdict {
        let t = now.timeIntervalSince1970
        return try write { db in
            try db.lock("nearcard-policy-acceptance")
            let visitor = try Self.visitorHash(did: did, db)
            let longest = max(perPeer?.seconds ?? 0, overall?.seconds ?? 0)
            try db.execute("DELETE FROM policyAcceptance WHERE at <= ?", t - longest)
            if let r = perPeer {
                let n: Int64 = try db.value("SELECT COUNT(*) FROM policyAcceptance WHERE didHash = ? AND at > ?", visitor, t - r.seconds) ?? 0
                if n >= r.count { return .perPeerLimit(r) }
            }
            if let r = overall {
                let n: Int64 = try db.value("SELECT COUNT(*) FROM policyAcceptance WHERE at > ?", t - r.seconds) ?? 0
                if n >= r.count { return .overallLimit(r) }
            }
            try db.execute("INSERT INTO policyAcceptance (didHash, at) VALUES (?, ?)", visitor, t)
            return .admitted
        }
    }

    /// What a visitor's acceptances are counted under: HMAC-SHA-256 keyed with the book's `visitor`
    /// secret over "nearcard/visitor/v1" ‖ 0x00 ‖ DID, in hex. Someone holding the DID (it is in cards,
    /// QR codes and CardDAV's X-NEARCARD-DID) and a copy of the table cannot tell which row is whose
    /// without the secret. The secret is made (32 random bytes) the first time it is needed; two bots
    /// making it at once keep the first one written.
    static func visitorHash(did: String, _ db: any SQLConnection) throws -> String {
        func stored() throws -> [UInt8]? {
            let hex: String? = try db.value("SELECT value FROM bookSecret WHERE name = 'visitor'")
            return hex.flatMap { try? Hex.decode($0) }.flatMap { $0.count == 32 ? $0 : nil }
        }
        var key = try stored()
        if key == nil {
            try db.execute("INSERT INTO bookSecret (name, value) VALUES ('visitor', ?) ON CONFLICT DO NOTHING", Hex.encode(Sodium.randomBytes(32)))
            key = try stored()
        }
        guard let key else { throw StoreError(.database, Phrase("the book's visitor secret is unreadable (table bookSecret)")) }
        return Hex.encode(HMACSHA256.authenticate(key: key, message: Array("nearcard/visitor/v1".utf8) + [0] + Array(did.utf8)))
    }
}
