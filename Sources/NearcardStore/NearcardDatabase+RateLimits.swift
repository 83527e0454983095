public import Foundation
import NearcardModel

/// A bot policy's rate limits (docs/BOT.md `rateLimits`), counted in the store: a restart does not
/// reset them, and every bot of a fleet on one PostgreSQL database counts the same acceptances.
extension NearcardDatabase {
    /// At most `count` acceptances in any `seconds`.
    public struct AcceptanceLimit: Sendable, Equatable {
        public let count: Int
        public let seconds: Double

        public init(count: Int, seconds: Double) {
            self.count = count
            self.seconds = seconds
        }
    }

    /// What `admitAcceptance` decided.
    public enum AcceptanceVerdict: Sendable, Equatable {
        /// Within the limits: recorded.
        case admitted
        /// This visitor already had the limit's count of acceptances in its window.
        case perPeerLimit(AcceptanceLimit)
        /// The bot (the fleet) already had the limit's count in its window.
        case overallLimit(AcceptanceLimit)
    }

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
