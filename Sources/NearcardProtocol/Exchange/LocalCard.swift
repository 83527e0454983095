public import NearcardModel

/// What this side's card carries in one exchange, as the store holds it when the session runs: the
/// card, what it discloses, the group proof, where we can be reached, and what we require of the peer.
/// The state machine asks for it (`Action.loadCard`) after its first flight, while the peer computes.
public struct LocalCard: Sendable {
    public var card: Card
    public var policy: SharingPolicy
    /// Addresses to put in the sealed route we hand over.
    public var routeHints: [RouteRecord.Hint]
    public var routeValidity: Int64
    /// A group-membership proof (Semaphore JSON, bound to our DID) the card carries, if any.
    public var issuerProof: String?
    /// Fields the peer's card must disclose (a bot policy); a card without them ends the session with
    /// `declined` instead of `done`, so neither side stores the exchange.
    public var requiredFields: Set<CardField>
    /// This node's presence key (docs/PROTOCOL.md §3), handed to the peer with our card so that it
    /// recognises our rotating tag afterwards.
    public var presenceKey: [UInt8]
    /// The DIDs of our contacts (at most `PSI.maximumSetSize`) for the private common-contacts step
    /// (§22), when this person turned it on; nil: off, and our acceptance does not offer it.
    public var commonContacts: [String]?
    /// Initiator: the selective-disclosure proof of the card, made by the state machine when the card
    /// is loaded (nil until then, and for a responder, whose proof is made with the card it sends).
    var disclosureProof: String?

    public init(
        card: Card, policy: SharingPolicy, presenceKey: [UInt8], routeHints: [RouteRecord.Hint] = [],
        routeValidity: Int64 = RouteRecord.defaultValidity, issuerProof: String? = nil, requiredFields: Set<CardField> = [],
        commonContacts: [String]? = nil
    ) {
        precondition((commonContacts?.count ?? 0) <= PSI.maximumSetSize)
        self.commonContacts = commonContacts
        precondition(presenceKey.count == ProtocolLimits.presenceKeyByteCount)
        self.presenceKey = presenceKey
        self.card = card
        self.policy = policy
        self.routeHints = routeHints
        self.routeValidity = routeValidity
        self.issuerProof = issuerProof
        self.requiredFields = requiredFields
    }
}
