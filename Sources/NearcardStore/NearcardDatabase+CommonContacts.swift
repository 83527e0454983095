package import Foundation
import NearcardCrypto
import NearcardModel

/// Private common contacts (docs/PROTOCOL.md §22): the person's setting (off by default), the set a
/// session offers, and what each exchange found, kept with the contact.
extension NearcardDatabase {
    /// At most this many DIDs take part (§22.3): the most recently met.
    public static let commonContactsLimit = 1000
    /// At most this many runs with one peer an hour (§22.3); past it, our acceptance does not offer it.
    public static let commonContactsPerPeerPerHour = 3

    public func commonContactsEnabled() throws(StoreError) -> Bool {
        try read { db in (try db.value("SELECT value FROM setting WHERE key = 'share.commonContacts'") as String?) == "on" }
    }

    public func setCommonContacts(enabled: Bool) throws(StoreError) {
        defer { forgetSharedCard() }
        try write { db in
            try db.execute(
                "INSERT INTO setting (key, value) VALUES ('share.commonContacts', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                enabled ? "on" : "off")
        }
    }

    /// The set to offer in a session, when the setting is on: the DIDs of the contacts met most
    /// recently, at most `commonContactsLimit`; nil when off.
    package func commonContactsSet() throws(StoreError) -> [String]? {
        guard try sharedCard().commonContacts else { return nil }
        return try read { db in
            try db.values(
                "SELECT did FROM contact WHERE did IS NOT NULL ORDER BY COALESCE(exchangeTimestamp, receivedAt) DESC LIMIT ?",
                [.integer(Int64(Self.commonContactsLimit))])
        }
    }

    /// A run is counted against the peer's rate (§22.3) when it begins, completed or not, so that a peer
    /// cannot test guesses by abandoning the exchange after its result. The peer is kept as a hash (a
    /// deleted contact's DID stays nowhere in clear) and forgotten after the hour.
    package func recordCommonContactsRun(with did: String, now: Date = Date()) throws(StoreError) {
        try write { db in
            try db.execute("DELETE FROM commonContactRun WHERE at <= ?", now.addingTimeInterval(-3600).timeIntervalSince1970)
            try db.execute("INSERT INTO commonContactRun (peerHash, at) VALUES (?, ?)", Self.peerHash(did), now.timeIntervalSince1970)
        }
    }

    /// Whether a run with the holder of `did` is still within the rate (§22.3).
    package func commonContactsAllowed(with did: String, now: Date = Date()) throws(StoreError) -> Bool {
        try read { db in
            let n: Int64 =
                try db.value(
                    "SELECT COUNT(*) FROM commonContactRun WHERE peerHash = ? AND at > ?",
                    Self.peerHash(did), now.addingTimeInterval(-3600).timeIntervalSince1970) ?? 0
            return n < Int64(Self.commonContactsPerPeerPerHour)
        }
    }

    static func peerHash(_ did: String) -> String { Hex.encode(SHA256.hash(Array("nearcard/psi-rate\u{0}\(did)".utf8))) }

    /// The contacts in common with `did` as the last exchange's step found them (DIDs of our own
    /// contacts): nil when no step ran with that contact, empty when it found none.
    public func commonContacts(with did: String) throws(StoreError) -> [String]? {
        try read { db in
            guard try db.row("SELECT 1 FROM commonContactCheck WHERE contactDID = ?", did) != nil else { return nil }
            return try db.values("SELECT commonDID FROM commonContact WHERE contactDID = ? ORDER BY commonDID", [.text(did)])
        }
    }
}
