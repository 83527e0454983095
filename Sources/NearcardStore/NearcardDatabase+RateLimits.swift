public import Foundation
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
        let visitor = Contact.socialGraphHash(did: did)
        return try write { db in
            try db.lock("nearcard-policy-acceptance")
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
}
