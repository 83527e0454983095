public import NearcardCrypto
public import NearcardModel

/// Everything a completed exchange produced.
public struct ExchangeOutcome: Sendable {
    public let peer: PeerIdentity
    /// The short authentication string both screens showed ("123 456").
    public let sas: String
    public let handshakeHash: [UInt8]
    public let myPayload: ProximityPayload
    public let theirPayload: ProximityPayload.Verified
    public let theirPayloadJSON: JSONValue
    public let myMessage: String?
    public let theirMessage: String?
    /// The route the peer gave us (sealed form as received, and opened).
    public let theirSealedRoute: String
    public let theirRoute: RouteRecord
    /// The route we gave the peer (its mailbox token is how we will recognise them).
    public let myRoute: RouteRecord
    public let graphEdgeID: String
    public let completedAt: Int64
    /// Opened with a QR invitation (§19): the inviter's key was pinned and no code was compared.
    public var invited: Bool = false
    /// The key the peer's presence tags resolve with (docs/PROTOCOL.md §3), from its `card` message.
    public var theirPresenceKey: [UInt8] = []
    /// The private common-contacts step's result (§22), when both offered it: which of our contacts'
    /// DIDs the peer also holds, and its book's size up to a bucket.
    public var commonContacts: PSI.Result? = nil
    /// The exchange version the session spoke (§21): 2 with a peer that speaks only that, whose card
    /// is then of the older kind (the seven version-2 fields).
    public var version: Int = ExchangeVersions.lowest
}
